#!/bin/bash
# Run memmut's devstack plugin through devstack's own function library
# (tests/functional/test_devstack_plugin.py sets the environment).
#
# Only package installation, sudo and systemd are replaced, by recorders
# writing to $RECORD: sudo runs a command only when every file it names
# is inside $SANDBOX (iniset -sudo on the unit files devstack writes
# there), and records it without running it otherwise. Everything else
# -- keystone calls through the openstack command, psql/createdb, the
# ini files, the uwsgi configuration, the unit files -- is devstack's.
#
#   devstack_driver.sh PHASE [PHASE2]   e.g. "stack install"

# The variables set here are read by the devstack functions sourced.
# shellcheck disable=SC2034
set -o errexit

TOP_DIR=$DEVSTACK_DIR
RECORD=${RECORD:?}

function record {
    echo "$*" >> "$RECORD"
}

# What stack.sh defines before any plugin runs. stackrc names the user
# "stack" when run as root; the test bed has no such user.
source "$TOP_DIR/stackrc"
STACK_USER=$(id -un)
APACHE_USER=$STACK_USER
APACHE_GROUP=$(id -gn)
source "$TOP_DIR/lib/database"
source "$TOP_DIR/lib/databases/postgresql"
source "$TOP_DIR/lib/rpc_backend"
source "$TOP_DIR/lib/apache"
source "$TOP_DIR/lib/keystone"

# The test bed's services (stackrc and lib/keystone derive these from
# SERVICE_HOST otherwise).
KEYSTONE_SERVICE_URI=$TEST_KEYSTONE_URI
# stackrc fixes DEST at /opt/stack: the sandbox's instead
DEST=$SANDBOX/opt/stack
DATA_DIR=$DEST/data
DATABASE_TYPE=postgresql
BASE_SQL_CONN=$TEST_BASE_SQL_CONN
SYSTEMD_DIR=$SANDBOX/systemd
# no memcached here: auth_token keeps its cache in process
MEMCACHE_SERVERS=""

function sudo {
    record "sudo $*"
    local arg inside=0
    for arg in "$@"; do
        if [[ "$arg" == "$SANDBOX"/* ]]; then
            inside=1
        elif [[ "$arg" == /* && "$arg" != *[[:space:]\[\]^]* && \
                -e "$(dirname "$arg")" ]]; then
            return 0
        fi
    done
    if [[ $inside == 1 ]]; then
        "$@"
    fi
}
function install_package {
    record "install_package $*"
}
function pip_install {
    record "pip_install $*"
}
function pip_install_gr {
    record "pip_install_gr $*"
}
function setup_develop {
    record "setup_develop $*"
}
function systemctl_recorder {
    record "systemctl $*"
    # stop_process asks whether a unit is enabled
    if [[ "$1" == "is-enabled" ]]; then
        grep -q "systemctl enable $2" "$RECORD"
    fi
}
SYSTEMCTL=systemctl_recorder

source "$MEMMUT_DIR/devstack/settings"
for phase in "$@"; do
    # shellcheck disable=SC2086
    source "$MEMMUT_DIR/devstack/plugin.sh" $phase
done
