#!/bin/sh
#
# Copyright (c) 2026 The dsroute authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
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
