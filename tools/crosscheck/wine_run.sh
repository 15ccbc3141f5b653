#!/usr/bin/env bash
# Run a Windows console program under Debian's wine64, headless:
#   WINEPREFIX=/abs/dir wine_run.sh PROGRAM.exe ARGS...
# The first run creates the prefix (wineboot, ~10 s; concurrent runs wait on a
# lock, and its messages go to $WINEPREFIX.log). No display is used: the
# programs are console programs, and Mono and Gecko are never offered. Output
# (stdout and stderr together) has the console's CRLF turned into LF, so it
# reads as the other targets' does; the exit status passes through.
# Used by `make crosscheck` (mk/cross.mk) for the x86_64-w64-mingw32 target.
set -uo pipefail
wine=${XC_WINE:-/usr/lib/wine/wine64}
export WINEPREFIX=${WINEPREFIX:?WINEPREFIX must be an absolute directory}
export WINEDEBUG=-all
export WINEDLLOVERRIDES='mscoree,mshtml='
unset DISPLAY WAYLAND_DISPLAY
if [ ! -f "$WINEPREFIX/system.reg" ]; then
    mkdir -p "$(dirname "$WINEPREFIX")"
    (
        flock 9
        if [ ! -f "$WINEPREFIX/system.reg" ]; then
            "$wine" wineboot --init && "$(dirname "$wine")/wineserver" -w
        fi
    ) 9>"$WINEPREFIX.lock" >>"$WINEPREFIX.log" 2>&1 || {
        echo "wine_run: cannot create the wine prefix $WINEPREFIX (see $WINEPREFIX.log)" >&2
        exit 125
    }
fi
"$wine" "$@" 2>&1 | tr -d '\r'
exit "${PIPESTATUS[0]}"
