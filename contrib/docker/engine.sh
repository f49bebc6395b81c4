#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by ./dev.sh image and tests/containers.sh: a container engine
# where none runs and no registry is reachable.
#
#	engine_up DIR [private]	use $DOCKER_HOST, else a dockerd already
#				at /var/run/docker.sock (unless "private"),
#				else start dockerd with its state in DIR (or
#				reuse the one a run before left there); sets
#				DOCKER (the client) and DOCKER_HOST
#	engine_down		stop the dockerd engine_up started, if any
#	engine_base TAG PKG...	make the image TAG (debian:SUITE) from
#				debootstrap unless the engine has it, with
#				the packages given installed; the root file
#				system is cached in ~/.cache/dsroute/docker-base
#	engine_import TAG DIR [CHANGE...]
#				the directory DIR as the image TAG, one layer,
#				CHANGE being docker import --change lines
#
# The private dockerd is Debian's docker.io as root, every path of it in
# DIR: no iptables, no bridge (containers run with --network none, host
# or another's namespace), its own configuration file.  Each function
# returns 1 with the reason in $why.

: "${ENGINE_SUDO:=}"
ENGINE_STARTED=0
ENGINE_PID=""

# engine_cli: the client that comes with the dockerd it talks to, when
# Debian's is here (another docker earlier on PATH may be far newer).
engine_cli() {
	if [ -x /usr/bin/docker ]; then
		DOCKER="$ENGINE_SUDO /usr/bin/docker"
	elif command -v docker >/dev/null 2>&1; then
		DOCKER="$ENGINE_SUDO $(command -v docker)"
	else
		why="no docker client (Debian's docker.io)"
		return 1
	fi
}

# engine_ping: the engine at $DOCKER_HOST answers.
engine_ping() {
	$DOCKER version --format '{{.Server.Version}}' >/dev/null 2>&1
}

engine_up() {
	engine_cli || return 1
	if [ -n "${DOCKER_HOST:-}" ]; then
		export DOCKER_HOST
		engine_ping && return 0
		why="DOCKER_HOST=$DOCKER_HOST does not answer"
		return 1
	fi
	if [ "${2:-}" != private ] && [ -S /var/run/docker.sock ]; then
		DOCKER_HOST=unix:///var/run/docker.sock
		export DOCKER_HOST
		engine_ping && return 0
		unset DOCKER_HOST
	fi
	_ed=$1
	DOCKER_HOST=unix://$_ed/docker.sock
	export DOCKER_HOST
	engine_ping && return 0
	if ! command -v dockerd >/dev/null 2>&1 &&
	    ! [ -x /usr/sbin/dockerd ]; then
		why="no dockerd (Debian's docker.io)"
		return 1
	fi
	if [ -z "$ENGINE_SUDO" ] && [ "$(id -u)" -ne 0 ]; then
		why="dockerd needs root"
		return 1
	fi
	mkdir -p "$_ed"
	echo '{}' >"$_ed/daemon.json"
	rm -f "$_ed/docker.sock"
	PATH=$PATH:/usr/sbin $ENGINE_SUDO dockerd \
	    --config-file "$_ed/daemon.json" --data-root "$_ed/data" \
	    --exec-root "$_ed/exec" --pidfile "$_ed/dockerd.pid" \
	    -H "$DOCKER_HOST" --iptables=false --ip6tables=false \
	    --bridge=none </dev/null >"$_ed/dockerd.log" 2>&1 &
	ENGINE_PID=$!
	_i=0
	while ! engine_ping; do
		_i=$((_i + 1))
		if ! kill -0 "$ENGINE_PID" 2>/dev/null || [ $_i -gt 600 ]; then
			why="dockerd did not start: $(grep -v 'level=info' \
			    "$_ed/dockerd.log" | tail -n 1 | cut -c1-200)"
			kill "$ENGINE_PID" 2>/dev/null
			wait "$ENGINE_PID" 2>/dev/null
			ENGINE_PID=""
			return 1
		fi
		sleep 0.1
	done
	ENGINE_STARTED=1
}

# engine_down: SIGTERM, and dockerd stops what still runs and its
# containerd; SIGKILL after a minute.
engine_down() {
	[ "$ENGINE_STARTED" -eq 1 ] || return 0
	ENGINE_STARTED=0
	# Its socket goes with it: what runs next must not be told to use it.
	unset DOCKER_HOST
	kill -TERM "$ENGINE_PID" 2>/dev/null
	_i=0
	while kill -0 "$ENGINE_PID" 2>/dev/null; do
		_i=$((_i + 1))
		if [ $_i -gt 600 ]; then
			kill -KILL "$ENGINE_PID" 2>/dev/null
			break
		fi
		# sudo has gone, or dockerd is a zombie of ours.
		if ! [ -d "/proc/$ENGINE_PID" ] ||
		    grep -q '^State:.*Z' "/proc/$ENGINE_PID/status" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	wait "$ENGINE_PID" 2>/dev/null
	ENGINE_PID=""
	return 0
}

# engine_import TAG DIR [CHANGE...]
engine_import() {
	_tag=$1
	_dir=$2
	shift 2
	for _c; do
		set -- "$@" --change "$_c"
		shift
	done
	tar --numeric-owner -C "$_dir" -cf - . |
	    $DOCKER import "$@" - "$_tag" >/dev/null
}

# The mirror this host's apt uses, for debootstrap.
engine_mirror() {
	_m=$(sed -n 's|^URIs: *\(.*/debian\)/*$|\1|p' \
	    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$_m" ] || _m=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {
	    print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	echo "${_m:-http://deb.debian.org/debian}"
}

# engine_base TAG PKG...: a tag that the engine already has and that is
# not ours (a registry's debian:bookworm) is used as it is; ours is made
# again when the packages asked for change.  The root file system is the
# Debian image's: minbase, no apt lists, PATH and CMD as in Docker's.
engine_base() {
	_tag=$1
	shift
	case $_tag in
	debian:?*)	_suite=${_tag#debian:} ;;
	*)		why="the base $_tag is no debian:SUITE"
			return 1 ;;
	esac
	_pkgs=$(printf '%s\n' "$@" | sort -u | tr '\n' ' ')
	_key=$(printf 'engine_base 1\n%s\nminbase\n%s\n' "$_suite" "$_pkgs" |
	    sha256sum | cut -c1-12)
	_have=$($DOCKER image inspect -f \
	    '{{index .Config.Labels "org.dsroute.base"}}' "$_tag" 2>/dev/null)
	if [ $? -eq 0 ]; then
		case $_have in
		"" | "<no value>" | "$_key")	return 0 ;;
		esac
	fi
	_cache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/docker-base
	_tar=$_cache/$_suite-$_key.tar
	mkdir -p "$_cache"
	if ! (
		flock 9
		[ -f "$_tar" ] && exit 0
		_root=$_cache/$_suite-$_key.root
		$ENGINE_SUDO rm -rf "$_root"
		echo "engine: debootstrap $_suite with $_pkgs" >&2
		_list=$(echo $_pkgs | tr ' ' ',')
		$ENGINE_SUDO debootstrap --variant=minbase \
		    ${_list:+--include="$_list"} "$_suite" "$_root" \
		    "$(engine_mirror)" >"$_cache/$_suite-$_key.log" 2>&1 ||
		    exit 1
		$ENGINE_SUDO sh -c 'rm -rf "$0"/var/lib/apt/lists/* \
		    "$0"/var/cache/apt/*.bin "$0"/var/cache/apt/archives/*.deb
		    tar --numeric-owner -C "$0" -cf "$1.new" . &&
		    mv "$1.new" "$1" && rm -rf "$0"' "$_root" "$_tar"
	) 9>"$_cache/lock"; then
		why="debootstrap failed; see $_cache/$_suite-$_key.log"
		return 1
	fi
	$DOCKER import --change "LABEL org.dsroute.base=$_key" \
	    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	    --change 'CMD ["bash"]' "$_tar" "$_tag" >/dev/null
}
