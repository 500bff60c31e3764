# Shared by the bench scripts: source "$(dirname "$0")/../lib.sh".

# median prints the median of its numeric arguments (the mean of the two
# middle ones when their count is even).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}
