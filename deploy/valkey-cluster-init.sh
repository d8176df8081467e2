#!/bin/sh
# Form a Valkey Cluster once, then wait until it is healthy: the one-shot init container
# of compose.cluster.yaml (POSIX sh; needs valkey-cli, which the valkey/valkey image has).
#
#   VALKEY_NODES="10.0.0.11:6379 10.0.0.12:6379 ..." VALKEY_REPLICAS=1 sh valkey-cluster-init.sh
#
# Environment: VALKEY_NODES (required: every node as IP:PORT; valkey-cli --cluster create
# makes the first N / (1 + VALKEY_REPLICAS) of them masters), VALKEY_REPLICAS (default 1),
# REDISCLI_AUTH (the password, when the nodes require one; valkey-cli reads it too),
# VALKEY_CLI (default valkey-cli; redis-cli 7 works too), VALKEY_INIT_TIMEOUT (seconds per
# wait, default 120).
#
# Idempotent: a cluster that serves all 16384 slots already is left as it is (a restart of
# the compose project runs this again). It exits 0 only once the cluster state is ok and
# every replica is in sync with its master, so that the klondike-live nodes, which start
# after it, see masters with replicas (and acknowledge moves once a replica has them).
set -eu

cli=${VALKEY_CLI:-valkey-cli}
replicas=${VALKEY_REPLICAS:-1}
timeout=${VALKEY_INIT_TIMEOUT:-120}
nodes=${VALKEY_NODES:?set VALKEY_NODES to the cluster nodes, IP:PORT separated by spaces}

# shellcheck disable=SC2086 # word splitting of the node list is intended
set -- $nodes
first=$1
count=$#

ask() { # ask HOST:PORT COMMAND... : a node's answer, or nothing if it does not answer
    address=$1
    shift
    "$cli" -h "${address%:*}" -p "${address##*:}" "$@" 2>/dev/null | tr -d '\r' || true
}

wait_until() { # wait_until WHAT TEST...: run TEST until it succeeds, or fail after $timeout s
    what=$1
    shift
    waited=0
    until "$@"; do
        if [ "$waited" -ge "$timeout" ]; then
            echo "valkey-cluster-init: timed out after ${timeout}s waiting for $what" >&2
            exit 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
}

all_answer() {
    for node in $nodes; do
        [ "$(ask "$node" PING)" = PONG ] || return 1
    done
}

slots_assigned() {
    ask "$first" CLUSTER INFO | grep -q '^cluster_slots_assigned:16384$'
}

state_ok() {
    for node in $nodes; do
        ask "$node" CLUSTER INFO | grep -q '^cluster_state:ok$' || return 1
    done
}

replicas_in_sync() { # as many replicas online as the layout has, across all masters
    online=0
    for node in $nodes; do
        in_sync=$(ask "$node" INFO replication | grep -c '^slave[0-9]*:.*state=online' || true)
        online=$((online + in_sync))
    done
    [ "$online" -ge $((count - count / (1 + replicas))) ]
}

wait_until "every node to answer PING" all_answer
if slots_assigned; then
    echo "valkey-cluster-init: the cluster is formed already"
else
    echo "valkey-cluster-init: forming a cluster of $count nodes, $replicas replica(s) per master"
    # shellcheck disable=SC2086
    "$cli" --cluster create $nodes --cluster-replicas "$replicas" --cluster-yes
fi
wait_until "cluster_state:ok on every node" state_ok
wait_until "every replica to be in sync with its master" replicas_in_sync
echo "valkey-cluster-init: the cluster is ok, every replica in sync"
