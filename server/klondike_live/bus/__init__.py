"""The bus between nodes: typed messages (`messages`) and the Redis subscriber that
receives them (`subscriber`). Messages are published by the store's atomic scripts."""
