#!/bin/bash
# devstack/plugin.sh - memmut's devstack plugin
#
#   [[local|localrc]]
#   enable_plugin memmut https://opendev.example/memmut
#
# See doc/source/devstack.rst.

# shellcheck source=devstack/lib/memmut
source "$(dirname "${BASH_SOURCE[0]}")/lib/memmut"

if is_service_enabled memmut-api memmut-controller memmut-agent \
        memmut-memstore; then
    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing memmut"
        install_memmut
    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring memmut"
        configure_memmut
        if is_service_enabled memmut-api memmut-controller; then
            create_memmut_accounts
            init_memmut
        fi
        configure_nova_for_memmut
    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Starting memmut"
        start_memmut
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_memmut
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_memmut
    fi
fi
