"""The gateway: websocket sessions, HTTP routes, the bus hub and the race service.

It holds no truth that is not also in Redis; see server.py for how a node starts and
stops.
"""
