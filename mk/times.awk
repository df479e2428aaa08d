# The table `make test` prints at its end, from mk/timed-shell's lines (target, start, end, CPU
# ticks): per target, when its first line started and its last ended (minutes from the run's
# start), its wall time (first start to last end) and the CPU its lines used; the first to start
# first. CPU beside wall says what ran on both cores; the total CPU, over the cores, is the floor
# of any ordering.
# /proc counts CPU in USER_HZ ticks: 100 a second on every Linux.
BEGIN { FS = "\t"; ticks = 100 }
{
    if (!($1 in first)) { order[++n] = $1; first[$1] = $2; last[$1] = $3 }
    if ($2 < first[$1]) first[$1] = $2
    if ($3 > last[$1]) last[$1] = $3
    cpu[$1] += $4 / ticks; total += $4 / ticks
    if (begin == "" || $2 < begin) begin = $2
    if ($3 > end) end = $3
}
END {
    if (n == 0) exit
    # Sort by first start (insertion sort: a few dozen targets).
    for (i = 2; i <= n; i++) for (j = i; j > 1 && first[order[j]] < first[order[j - 1]]; j--) {
        t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
    }
    printf "\n>> where make test's time went (minutes from its start; wall and CPU in seconds)\n"
    width = 6
    for (i = 1; i <= n; i++) if (length(order[i]) > width) width = length(order[i])
    printf "%-*s %7s %7s %8s %8s\n", width, "target", "start", "end", "wall", "CPU"
    for (i = 1; i <= n; i++) {
        t = order[i]
        printf "%-*s %7.1f %7.1f %8.0f %8.0f\n", width, t, (first[t] - begin) / 60, (last[t] - begin) / 60, last[t] - first[t], cpu[t]
    }
    printf "%-*s %7.1f %7.1f %8.0f %8.0f\n", width, "all", 0, (end - begin) / 60, end - begin, total
}
