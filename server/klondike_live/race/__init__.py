"""Rooms and races as plain values: lobby state and transitions, boards and their
events per audience, ranking. No I/O: the store makes these atomic in Redis and the
gateway turns them into frames on sockets.
"""
