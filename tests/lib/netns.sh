#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced first by a scenario that listens on fixed ports (the presets'
# 9000 and 9001), or needs addresses of its own: run it again in a
# network namespace of its own, with only a loopback interface, so that
# it cannot collide with anything else on the machine; DSR_NETNS_PRIVATE
# says it does.  Where namespaces are not available it runs as it is,
# and says so.

if [ -z "${DSR_NETNS:-}" ]; then
	DSR_NETNS=1
	export DSR_NETNS
	for _u in "unshare -n" "unshare -rn"; do
		if command -v ip >/dev/null 2>&1 &&
		    $_u ip link set lo up 2>/dev/null; then
			exec $_u env DSR_NETNS_PRIVATE=1 sh -c \
			    'ip link set lo up && exec sh "$0"' "$0"
		fi
	done
	echo "# no private network namespace (unshare, ip): using the" \
	    "machine's ports"
fi
