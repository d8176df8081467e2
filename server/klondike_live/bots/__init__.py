"""Bot racers: levels (pace and mistakes), the policy that picks a move from a racer's
own view, and the process pool that thinks for them. Pure but for `pool.py`; the live
service drives bots as connections (`service/bots.py`)."""
