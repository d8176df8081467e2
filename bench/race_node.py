"""A node for bench_race_moves.py: `klondike-live serve`, dealing every game that is not
drawn from the certified pool (races created with `deal: "any"`, their rematches) from
one seed, so that racers can replay a recorded game of that deal.

    .venv/bin/python bench/race_node.py SEED serve --port 0 --redis URL --data-dir D
"""

from __future__ import annotations

import sys

from klondike_live.cli import main
from klondike_live.service import live

if __name__ == "__main__":
    seed, args = sys.argv[1], sys.argv[2:]
    live._new_seed = lambda: seed  # read when the node's service is made
    sys.exit(main(args))
