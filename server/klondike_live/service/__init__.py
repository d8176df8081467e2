"""The live service: rooms, boards, catch-up, endings, timers and daily challenges.

Transport-free: it talks to the store and the bus, and to clients only through the
narrow connection interface the gateway gives it.
"""
