# Shared by the workbench's tests (t/61xx-tui-*.sh), as tmux's own regress tests do it: a
# private tmux server, a fixed window size, TERM and locale, keys sent with send-keys and
# assertions on capture-pane's text.  Source it after tap.sh with $tmp set; it sets a watchdog
# that ends the whole test after $TUI_TEST_SECONDS (default 300) and cleans up on exit.

# A server per start_tui (reusing a socket right after kill-server races with its exit).
tmux_base="singa-tui-test-$$"
tmux_n=0
tmux_sock="$tmux_base-0"
T() { tmux -L "$tmux_sock" -f /dev/null "$@"; }

if ! command -v tmux >/dev/null 2>&1; then
    echo "1..0 # SKIP tmux is not installed (scripts/install-deps.sh installs it)"
    exit 0
fi

kill_servers() {
    i=0
    while [ $i -le $tmux_n ]; do
        tmux -L "$tmux_base-$i" kill-server >/dev/null 2>&1
        i=$((i + 1))
    done
}
cleanup() {
    kill_servers
    [ -n "${watchdog:-}" ] && kill "$watchdog" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 1' INT TERM
(
    i=0 # short sleeps, so that killing this subshell ends it (and nothing holds stdout open)
    while [ $i -lt "${TUI_TEST_SECONDS:-300}" ]; do
        sleep 1 >/dev/null 2>&1
        i=$((i + 1))
    done
    echo "Bail out! $0 took longer than ${TUI_TEST_SECONDS:-300} s"
    kill -TERM $$ 2>/dev/null
) &
watchdog=$!

# The tmux server and the programs in it see a fixed locale; sanitizer reports (check-asan) go
# to files, and ncurses's own allocations at exit are not leaks of ours.
export LC_ALL=C.UTF-8
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$PWD/$tmp/asan"
export LSAN_OPTIONS="suppressions=$top_srcdir/t/tui-lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export XDG_STATE_HOME="$PWD/$tmp/state"

# start_tui [-x W -y H] [ENV=VALUE...] -- ARGS...: runs singa-tui ARGS in a fresh session, in
# $tmp, with TERM=screen-256color.  When it ends the pane prints EXIT=<status> and keeps
# `stty -a` in $tmp/stty.out.
start_tui() {
    w=120 h=40 envs=
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        case $1 in
        -x) w=$2; shift ;;
        -y) h=$2; shift ;;
        *) envs="$envs $1" ;;
        esac
        shift
    done
    shift
    {
        echo "cd '$PWD/$tmp' || exit 1"
        printf 'env TERM=screen-256color%s "%s"' "$envs" "$SINGA_TUI"
        for a in "$@"; do printf " '%s'" "$a"; done
        echo
        echo 'echo "EXIT=$?"'
        echo "stty -a >'$PWD/$tmp/stty.out'"
        echo 'exec sleep 600'
    } >"$tmp/run.sh"
    rm -f "$tmp/stty.out"
    T kill-server >/dev/null 2>&1
    tmux_n=$((tmux_n + 1))
    tmux_sock="$tmux_base-$tmux_n"
    T new-session -d -x "$w" -y "$h" "sh '$PWD/$tmp/run.sh'"
}

screen() { T capture-pane -p 2>/dev/null; }
keys() { T send-keys "$@"; }

# panel_text 'N Title': the text of that panel in $tmp/screen.txt, its lines joined by spaces (a
# line the panel wrapped reads whole again).
panel_text() {
    python3 - "$tmp/screen.txt" "$1" <<'PY'
import sys
rows = open(sys.argv[1], encoding="utf-8").read().split("\n")
top = next((i for i, r in enumerate(rows) if "┌─ " + sys.argv[2] in r), None)
if top is None:
    sys.exit(1)
left = rows[top].index("┌─ " + sys.argv[2])
right = rows[top].index("┐", left)
text = []
for r in rows[top + 1:]:
    piece = r[left:right + 1]
    if not piece.startswith("│"):
        break
    text.append(piece[1:-1].strip())
print(" ".join(text))
PY
}

# wait_for PATTERN [SECONDS]: until the screen matches the grep pattern; the last capture is
# in $tmp/screen.txt either way.
wait_for() {
    i=0 limit=$((${2:-20} * 5))
    while [ $i -lt "$limit" ]; do
        screen >"$tmp/screen.txt"
        grep -q -- "$1" "$tmp/screen.txt" && return 0
        sleep 0.2
        i=$((i + 1))
    done
    return 1
}

# The progress panel's step and latest loss on the screen now.
step_now() { screen | grep -o 'step   [0-9]*' | head -n 1 | awk '{ print $2 }'; }
loss_now() { screen | grep -o 'loss   [0-9.e+-]*' | head -n 1 | awk '{ print $2 }'; }

# The pid of singa-tui in the pane (the child of the pane's shell).
tui_pid() { pgrep -P "$(T display -p '#{pane_pid}')" | head -n 1; }

# Whether the terminal is back to normal: the shell's EXIT line shows, the alternate screen is
# off, the cursor shows, and the tty is in canonical mode with echo.
restored() {
    wait_for "EXIT=$1" 30 || return 1
    for i in 1 2 3 4 5 6 7 8 9 10; do [ -s "$tmp/stty.out" ] && break; sleep 0.2; done
    [ "$(T display -p '#{alternate_on} #{cursor_flag}')" = "0 1" ] &&
        grep -q -- ' icanon' "$tmp/stty.out" && grep -q -- ' echo ' "$tmp/stty.out"
}

# The last test of a workbench test: no sanitizer wrote a report (check-asan); then the plan,
# keeping $tmp when something failed.
tui_done() {
    cat "$tmp"/asan* 2>/dev/null | head -n 40 | sed 's/^/# /'
    ! ls "$tmp"/asan* >/dev/null 2>&1
    report $? "no sanitizer reports"
    [ $failed -eq 0 ] && rm -rf "$tmp"
    done_testing
}
