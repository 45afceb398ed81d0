# Reading run.log tables by column name, for the GPU tests (sourced by
# lib.sh) and for tests/gpu/check_table.sh, which runs them on CPU logs.

# table_col FILE LABEL: the LABEL column of every row (SUCCESS or FAILED) of
# every table in FILE, one value a line. The column is found by its header
# label, never by position (a new column moves the rest): labels are
# separated by two or more spaces in the header, a row's values by spaces
# (none of them has one, up to Size Detail, which is refused for that).
# Exits 2, naming the file and line, when a table lacks the label or a row
# comes before any header.
table_col() {
  awk -v want="$2" '
    /^Status  / {
      n = split($0, h, /  +/); c = 0
      for (i = 1; i <= n; i++) if (h[i] == want) c = i
      if (!c || c == n) { printf "%s:%d: no column \"%s\" to read\n", FILENAME, FNR, want > "/dev/stderr"; bad = 1; exit }
      next
    }
    /^(SUCCESS|FAILED) / {
      if (!c) { printf "%s:%d: a row before any header\n", FILENAME, FNR > "/dev/stderr"; bad = 1; exit }
      print $c
    }
    END { if (bad) exit 2 }' "$1"
}

# table_rows FILE: how many rows (SUCCESS or FAILED) FILE's tables have.
table_rows() { grep -cE '^(SUCCESS|FAILED) ' "$1"; }

# all_rows_are FILE LABEL VALUE: every row's LABEL column is VALUE, and
# there is at least one row (an empty table must not pass).
all_rows_are() {
  local vals
  vals=$(table_col "$1" "$2") || return 2
  [ -n "$vals" ] || { echo "$1: no rows" >&2; return 1; }
  [ "$(printf '%s\n' "$vals" | grep -cvxF -- "$3")" = 0 ] ||
    { echo "$1: $2 is not '$3' in every row: $(printf '%s\n' "$vals" | sort | uniq -c | tr -s ' \n' ' ')" >&2; return 1; }
}

# no_timer_marker FILE: every row's Marker is '-' or only the device's
# report of throttled clocks (a power cap during a long measurement is the
# device's doing, not a fallback of the timer's).
no_timer_marker() {
  local vals bad
  vals=$(table_col "$1" Marker) || return 2
  [ -n "$vals" ] || { echo "$1: no rows" >&2; return 1; }
  bad=$(printf '%s\n' "$vals" | grep -vxE -- '-|throttled\([a-z_,]+\)')
  [ -z "$bad" ] || { echo "$1: rows carry a timer's marker: $bad" >&2; return 1; }
}

# no_row_is FILE LABEL VALUE: no row's LABEL column is VALUE, and there is
# at least one row.
no_row_is() {
  local vals
  vals=$(table_col "$1" "$2") || return 2
  [ -n "$vals" ] || { echo "$1: no rows" >&2; return 1; }
  ! printf '%s\n' "$vals" | grep -qxF -- "$3" || { echo "$1: a row has $2 '$3'" >&2; return 1; }
}
