# SPDX-License-Identifier: ISC
#
# The "many runtimes" part of the benchmark (WORKLOADS=many), sourced by
# bench/run.sh, which sets B, DSROUTE, W, RAW, PIDS, RR_SECS, log and port.
# The runtimes are tests' fake runtime (tests/helpers/fakert.c, built
# into bench/build/fakert), each dialling a router's Unix socket with
# ADVR_V1 as DOTNET_DiagnosticPorts=PATH does; 100 real .NET processes
# would take gigabytes and minutes.  See bench/README.md.
#
# Knobs: MANY_N (runtimes, 100), MANY_ROUNDS (appear/gone and rr rounds),
# MANY_PS_REPS (timed listings per point).

# Every fake runtime comes from this uid: the default per-peer limits (32
# parked runtimes, 64 sessions) would refuse most of them.
MANY_LIM="--max-sessions 4000 --max-sessions-per-peer 2000 --max-runtimes 2000 --max-runtimes-per-peer 2000"

mr_now() {
	date +%s.%N
}

mr_since() {
	awk -v a="$1" -v b="$(mr_now)" 'BEGIN { printf "%.4f", b - a }'
}

# mr_start VAR NAME ARGS...: start a dsroute, wait until it is ready, and
# set VAR to its pid.
mr_start() {
	local var=$1 name=$2 pid i
	shift 2
	"$DSROUTE" $MANY_LIM "$@" >"$W/many-$name.log" 2>&1 </dev/null &
	pid=$!
	PIDS="$PIDS $pid"
	for i in $(seq 1 200); do
		grep -q "ready" "$W/many-$name.log" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	grep -q "ready" "$W/many-$name.log" ||
	    log "many: $name did not start: $(head -n 3 "$W/many-$name.log")"
	eval "$var=$pid"
}

mr_stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# mr_fakerts TAG SOCKET N: start N fake runtimes dialling SOCKET, named
# TAG1..TAGN; their pids are appended to $W/many-TAG.pids.
mr_fakerts() {
	local tag=$1 sock=$2 n=$3 i p k
	k=$(cat "$W/many-$tag.pids" 2>/dev/null | wc -l)
	for i in $(seq $((k + 1)) $((k + n))); do
		"$B/fakert" --connect "$sock" --name "$tag$i" \
		    >/dev/null 2>>"$W/many-fakert.err" &
		p=$!
		echo "$p" >>"$W/many-$tag.pids"
		PIDS="$PIDS $p"
	done
}

# mr_kill TAG: SIGKILL every fake runtime of TAG, as a crash would.
mr_kill() {
	local p
	[ -s "$W/many-$1.pids" ] || return 0
	for p in $(cat "$W/many-$1.pids"); do
		kill -9 "$p" 2>/dev/null || true
	done
	for p in $(cat "$W/many-$1.pids"); do
		wait "$p" 2>/dev/null || true
	done
	: >"$W/many-$1.pids"
} 2>/dev/null

# The number of runtimes a mirror directory shows: one stable name each.
mr_names() {
	ls "$1" 2>/dev/null | grep -c '^dsroute-.*-socket$' || true
}

mr_fds() {
	ls "/proc/$1/fd" 2>/dev/null | wc -l
}

# mr_until SECS CMD...: run CMD every 20 ms until it succeeds; print the
# seconds it took (or "timeout" and fail).
mr_until() {
	local t0 deadline
	t0=$(mr_now)
	deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo timeout
			return 1
		fi
		sleep 0.02
	done
	mr_since "$t0"
}

mr_ge() {
	[ "$("$1" "$2")" -ge "$3" ]
}

mr_eq() {
	[ "$("$1" "$2")" -eq "$3" ]
}

# mr_mem CONFIG STAGE PID [N]: the router's own RSS and descriptors, and
# its children's (the stand-ins) RSS and PSS summed.
mr_mem() {
	local c=$1 stage=$2 pid=$3 n=${4:-} kids k r rss pss krss=0 kpss=0 nk=0
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null)
	# A stand-in may end while it is read (two seconds after its
	# runtime): one that is gone counts for nothing.
	for k in $kids; do
		r=$(awk '/^VmRSS:/ { print $2 }' "/proc/$k/status" \
		    2>/dev/null) || continue
		pss=$(awk '/^Pss:/ { print $2 }' "/proc/$k/smaps_rollup" \
		    2>/dev/null) || continue
		[ -n "$r" ] && [ -n "$pss" ] || continue
		krss=$((krss + r))
		kpss=$((kpss + pss))
		nk=$((nk + 1))
	done
	echo "RESULT kind=many-mem config=$c stage=$stage runtimes=${n:-$stage}" \
	    "rss_kib=$rss fds=$(mr_fds "$pid") standins=$nk" \
	    "standin_rss_kib=$krss standin_pss_kib=$kpss round=1" >>"$RAW"
}

# mr_ps CONFIG N ADDR PHASE ROUND: one timed `dsroute ps ADDR`; set
# MR_ROWS to the rows it listed.
mr_ps() {
	local t0 secs
	t0=$(mr_now)
	"$DSROUTE" ps "$3" >"$W/many-ps.out" 2>>"$W/many-ps.err" || true
	secs=$(mr_since "$t0")
	MR_ROWS=$(($(wc -l <"$W/many-ps.out") - 1))
	echo "RESULT kind=many-ps config=$1 runtimes=$2 phase=$4" \
	    "ms=$(awk -v s="$secs" 'BEGIN { printf "%.1f", s * 1000 }')" \
	    "rows=$MR_ROWS round=$5" >>"$RAW"
}

# mr_listings NODE_ADDR MIRROR_DIR N: time the listings at N runtimes.
# The node learns each runtime's ProcessInfo on the first listing that
# finds it unknown and lists it only from then on: time the first, how
# long until a listing shows all N (asking every 20 ms), then the steady
# state.
mr_listings() {
	local node=$1 dir=$2 n=$3 t0 tries=1 i
	t0=$(mr_now)
	mr_ps node-tcp "$n" "$node" first 1
	while [ "$MR_ROWS" -lt "$n" ] && [ "$tries" -lt 500 ]; do
		sleep 0.02
		tries=$((tries + 1))
		mr_ps node-tcp "$n" "$node" until-complete "$tries"
	done
	echo "RESULT kind=many-ps config=node-tcp runtimes=$n phase=complete" \
	    "ms=$(awk -v s="$(mr_since "$t0")" 'BEGIN { printf "%.1f", s * 1000 }')" \
	    "rows=$MR_ROWS listings=$tries round=1" >>"$RAW"
	for i in $(seq 1 "$MANY_PS_REPS"); do
		mr_ps node-tcp "$n" "$node" steady "$i"
		mr_ps mirror-dir "$n" "dir:$dir" steady "$i"
	done
}

# The stable name of runtime PID in a mirror directory.
mr_name_of() {
	ls "$1" | grep -E "^dsroute-.*-$2-[0-9a-f]{8}-socket$" | head -n 1 |
	    sed "s|^|$1/|"
}

many_runtimes() {
	local n=$MANY_N NODE NPORT MIR LONE NODE1 WS1 WS100 WST NODET
	local stage prev s r c order pid t gone tag poll
	local m=$W/many-mir w1=$W/many-w1 w100=$W/many-w100 m1=$W/many-m1
	local wt=$W/many-wt

	log "many runtimes: $n fake runtimes per router"
	mkdir -m 700 "$m" "$w1" "$w100" "$m1" "$wt"
	NPORT=$(port 40)

	# 1, 2: memory and listings at 0, 1, 10, N runtimes.  The node has
	# a TCP listener for tools and no mirror; the mirror shows the
	# runtimes that dial it in its directory.
	mr_start NODE node tcp:127.0.0.1:"$NPORT",listen \
	    uds:"$W/many-node.sock",listen
	mr_start MIR mirror dir:"$m",listen uds:"$W/many-mir.sock",listen
	prev=0
	for stage in $(printf '%s\n' 0 1 10 "$n" | sort -nu); do
		t=$(mr_now)
		mr_fakerts mir "$W/many-mir.sock" $((stage - prev))
		mr_until 60 mr_ge mr_names "$m" "$stage" >/dev/null ||
		    log "many: the mirror shows $(mr_names "$m") of $stage"
		[ "$stage" -gt 0 ] && echo "RESULT kind=many-appear" \
		    "config=mirror-local runtimes=$((stage - prev))" \
		    "appear_s=$(mr_since "$t") stage=$stage round=1" >>"$RAW"
		mr_fakerts node "$W/many-node.sock" $((stage - prev))
		# The node: one parked connection each.
		[ "$stage" -eq 0 ] && NODE_FDS=$(mr_fds "$NODE")
		mr_until 60 mr_ge mr_fds "$NODE" $((NODE_FDS + stage)) \
		    >/dev/null || log "many: the node holds $(mr_fds "$NODE") fds"
		sleep 0.5
		mr_mem node "$stage" "$NODE"
		mr_mem mirror "$stage" "$MIR"
		mr_listings tcp:127.0.0.1:"$NPORT" "$m" "$stage"
		prev=$stage
	done
	mr_mem node "$n-listed" "$NODE" "$n"

	# 4: a fresh connection per ProcessInfo to one runtime through a
	# mirror name, with 1 and with N runtimes behind it; the same
	# through a linked mirror (two routers).
	mr_start LONE mirror1 dir:"$m1",listen uds:"$W/many-m1.sock",listen
	mr_fakerts one "$W/many-m1.sock" 1
	mr_start NODE1 node1 tcp:127.0.0.1:$(port 41),listen \
	    uds:"$W/many-node1.sock",listen
	mr_fakerts node1 "$W/many-node1.sock" 1
	mr_start WS1 link1 --link-poll 0.5 dir:"$w1",listen \
	    tcp:127.0.0.1:$(port 41),connect,peer=router
	mr_start WS100 link100 --link-poll 0.5 dir:"$w100",listen \
	    tcp:127.0.0.1:"$NPORT",connect,peer=router
	mr_until 60 mr_ge mr_names "$m1" 1 >/dev/null || log "many: no mirror-1"
	mr_until 60 mr_ge mr_names "$w1" 1 >/dev/null || log "many: no link-1"
	mr_until 60 mr_ge mr_names "$w100" "$n" >/dev/null ||
	    log "many: link-$n shows $(mr_names "$w100")"
	sleep 0.5
	mr_mem link-mirror "$n" "$WS100"
	declare -A MR_ADDR MR_PIDS
	pid=$(head -n 1 "$W/many-mir.pids")
	MR_ADDR[mirror-1]=$(mr_name_of "$m1" "$(cat "$W/many-one.pids")")
	MR_ADDR[mirror-$n]=$(mr_name_of "$m" "$pid")
	MR_ADDR[link-1]=$(mr_name_of "$w1" "$(cat "$W/many-node1.pids")")
	MR_ADDR[link-$n]=$(mr_name_of "$w100" "$(head -n 1 "$W/many-node.pids")")
	MR_PIDS[mirror-1]="--pid $LONE"
	MR_PIDS[mirror-$n]="--pid $MIR"
	MR_PIDS[link-1]="--pid $WS1 --pid $NODE1"
	MR_PIDS[link-$n]="--pid $WS100 --pid $NODE"
	order="mirror-1 mirror-$n link-1 link-$n"
	for r in $(seq 1 "$MANY_ROUNDS"); do
		for c in $order; do
			"$B/dsbench" rr "unix:${MR_ADDR[$c]}" --any-reply \
			    --name "many:$c" ${MR_PIDS[$c]} --conc 1 \
			    --duration "$RR_SECS" --timeout 60 \
			    2>>"$W/client.err" | sed "s/\$/ round=$r/" >>"$RAW"
		done
		order="$(echo $order | cut -d' ' -f2-) $(echo $order |
		    cut -d' ' -f1)"
	done
	for pid in $WS1 $WS100 $LONE $NODE1; do
		mr_stop "$pid"
	done
	mr_kill one
	mr_kill node1

	# Leaks: all N go (killed), then N come and go again.
	for r in 1 2; do
		[ "$r" -eq 2 ] && {
			t=$(mr_now)
			mr_fakerts mir "$W/many-mir.sock" "$n"
			mr_until 60 mr_ge mr_names "$m" "$n" >/dev/null || true
			echo "RESULT kind=many-appear config=mirror-local" \
			    "runtimes=$n appear_s=$(mr_since "$t") stage=again" \
			    "round=1" >>"$RAW"
			mr_fakerts node "$W/many-node.sock" "$n"
			mr_until 60 mr_ge mr_fds "$NODE" $((NODE_FDS + n)) \
			    >/dev/null || true
			sleep 0.5
			mr_mem node "$n-again" "$NODE" "$n"
			mr_mem mirror "$n-again" "$MIR" "$n"
		}
		mr_kill node
		t=$(mr_now)
		mr_kill mir
		mr_until 60 mr_eq mr_names "$m" 0 >/dev/null || true
		gone=$(mr_since "$t")
		echo "RESULT kind=many-gone config=mirror-local runtimes=$n" \
		    "gone_s=$gone round=$r" >>"$RAW"
		mr_until 30 mr_eq mr_fds "$NODE" "$NODE_FDS" >/dev/null || true
		sleep 0.5
		mr_mem node "gone$r" "$NODE" 0
		mr_mem mirror "gone$r" "$MIR" 0
	done
	mr_stop "$NODE"
	mr_stop "$MIR"

	# 3: how long until N runtimes that dial a node appear in a linked
	# mirror, and until they are gone after they are killed, with
	# --link-poll as default and 0.5 s.
	for poll in default 0.5; do
		t=""
		[ "$poll" = default ] || t="--link-poll $poll"
		mr_start NODET "nodet-$poll" tcp:127.0.0.1:$(port 42),listen \
		    uds:"$W/many-nodet.sock",listen
		mr_start WST "linkt-$poll" $t dir:"$wt",listen \
		    tcp:127.0.0.1:$(port 42),connect,peer=router
		sleep 1
		mr_mem "link-mirror-poll-$poll" 0 "$WST"
		for r in $(seq 1 "$MANY_ROUNDS"); do
			t=$(mr_now)
			mr_fakerts nodet "$W/many-nodet.sock" "$n"
			mr_until 120 mr_ge mr_names "$wt" "$n" >/dev/null ||
			    log "many: link shows $(mr_names "$wt") of $n"
			s=$(mr_since "$t")
			sleep 0.5
			[ "$r" -eq 1 ] && mr_mem "link-mirror-poll-$poll" "$n" \
			    "$WST"
			t=$(mr_now)
			mr_kill nodet
			mr_until 120 mr_eq mr_names "$wt" 0 >/dev/null || true
			gone=$(mr_since "$t")
			echo "RESULT kind=many-appear config=link-poll-$poll" \
			    "runtimes=$n appear_s=$s gone_s=$gone round=$r" \
			    >>"$RAW"
		done
		sleep 0.5
		mr_mem "link-mirror-poll-$poll" "gone" "$WST" 0
		mr_stop "$WST"
		mr_stop "$NODET"
	done
	grep -h -e '^warn' -e '^error' "$W"/many-*.log 2>/dev/null |
	    sed 's/[0-9]\{3,\}/N/g' | sort | uniq -c | sort -rn | head -n 20 |
	    sed 's/^/# many: log: /' >>"$RAW"
}
