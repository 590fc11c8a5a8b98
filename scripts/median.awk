# The median of the numbers on standard input, one a line, sorted
# (sort -n | awk -f scripts/median.awk): the benchmark scripts' rounds.
{ a[NR] = $1 }
END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }
