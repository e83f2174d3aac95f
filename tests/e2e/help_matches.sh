#!/usr/bin/env bash
# --help and the man pages agree, for mrcd, mrcctl, mrc-perf and mrc-lab:
# every long option a program's --help prints (for mrcctl: the top-level
# help and each command's, `mrcctl COMMAND --help`, with the commands read
# from the top-level help) is documented in its man page docs/man/PROG.8,
# in the OPTIONS section (or COMMANDS, where there is one), and every long
# option of those sections appears in --help. An option added to one side
# only fails.
# The README shows each program's usage in a block after a line
# "<!-- help: PROG -->": every line of it must be a line --help prints.
# Needs no lab and no root. `help_matches.sh --self-test` checks only that
# the comparison catches drift both ways (also run here, first).
. "$(dirname "$0")/lib.sh"

MAN="$ROOT/docs/man"

# Long options in a text, one per line, sorted and unique.
long_opts() { grep -oE -- '--[a-z0-9][a-z0-9-]*' | sort -u; }

# roff source to plain text: \- is -, font changes and \& go.
man_text() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\&//g' \
		-e 's/\\e/\\/g' "$1"
}

# The .SH sections named in $2 (e.g. "OPTIONS|COMMANDS") of a man page.
man_sections() {
	man_text "$1" | awk -v want="^(${2})\$" '
		/^\.SH / { name = $0; sub(/^\.SH +/, "", name); gsub(/"/, "", name)
			   on = name ~ want; next }
		on'
}

# compare NAME HELP_FILE MAN_FILE SECTIONS: print what one side lacks,
# return 1 if anything.
compare() {
	local name=$1 help=$2 page=$3 sections=$4 bad=0 o
	long_opts < "$help" > "$help.opts"
	man_sections "$page" "$sections" | long_opts > "$help.manopts"
	if [ ! -s "$help.opts" ]; then
		echo "    $name: no option found in --help" >&2
		return 1
	fi
	if [ ! -s "$help.manopts" ]; then
		echo "    $name: no option in the man page's ${sections//|/ or } section" >&2
		bad=1
	fi
	for o in $(comm -23 "$help.opts" "$help.manopts"); do
		echo "    $name: $o is in --help but not in $(basename "$page") (${sections//|/, })" >&2
		bad=1
	done
	for o in $(comm -13 "$help.opts" "$help.manopts"); do
		echo "    $name: $o is in $(basename "$page") (${sections//|/, }) but not in --help" >&2
		bad=1
	done
	return $bad
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The comparison itself: drift either way must be caught.
self_test() {
	local ok=0
	printf 'usage: x [--alpha N] [--beta]\n' > "$tmp/h"
	printf '.SH SYNOPSIS\nx \\-\\-alpha\n.SH OPTIONS\n.TP\n.B \\-\\-alpha\n.TP\n.B \\-\\-beta\n.SH SEE ALSO\n' > "$tmp/m.8"
	compare self "$tmp/h" "$tmp/m.8" OPTIONS 2> /dev/null || ok=1
	printf 'usage: x [--alpha N] [--beta] [--gamma]\n' > "$tmp/h"
	compare self "$tmp/h" "$tmp/m.8" OPTIONS 2> /dev/null && ok=1
	printf 'usage: x [--alpha N]\n' > "$tmp/h"
	compare self "$tmp/h" "$tmp/m.8" OPTIONS 2> /dev/null && ok=1
	# Options outside the checked sections neither count nor are required.
	printf '.SH DESCRIPTION\nlike \\fB\\-\\-other\\fP\n.SH OPTIONS\n.B \\-\\-alpha\n' > "$tmp/m.8"
	compare self "$tmp/h" "$tmp/m.8" OPTIONS 2> /dev/null || ok=1
	printf '.SH SYNOPSIS\n\\-\\-alpha\n.SH OPTIONS\n.B \\-\\-beta\n' > "$tmp/m.8"
	compare self "$tmp/h" "$tmp/m.8" OPTIONS 2> /dev/null && ok=1
	return $ok
}

begin help.checker_catches_drift
check "an option on one side only fails, both ways" self_test
end
[ "${1:-}" = --self-test ] && exit 0

# mrcctl's commands, from its top-level help: the words before the first
# argument or option of each command line, alternatives (a|b) expanded.
mrcctl_commands() {
	"$ROOT/build/mrcctl" --help | awk '
		/^  [a-z]/ {
			line = substr($0, 3)
			sub(/  .*/, "", line)		# the description
			n = split(line, w, " ")
			m = 1; cmds[1] = ""
			for (i = 1; i <= n && w[i] ~ /^[a-z][a-z|-]*$/; i++) {
				k = split(w[i], alt, "|"); nm = 0
				for (j = 1; j <= m; j++)
					for (a = 1; a <= k; a++)
						next_cmds[++nm] = cmds[j] (cmds[j] ? " " : "") alt[a]
				m = nm
				for (j = 1; j <= m; j++) cmds[j] = next_cmds[j]
			}
			for (j = 1; j <= m; j++) if (cmds[j]) print cmds[j]
		}'
}

help_of() {
	local prog=$1 out=$2 cmd
	case $prog in
	mrcd) "$ROOT/build/mrcd" --help > "$out" ;;
	mrc-perf) "$ROOT/build/mrc-perf" --help > "$out" ;;
	mrc-lab) "$ROOT/tools/mrc-lab" --help > "$out" ;;
	mrcctl)
		"$ROOT/build/mrcctl" --help > "$out" || return 1
		while read -r cmd; do
			# shellcheck disable=SC2086 # the command's words
			if ! "$ROOT/build/mrcctl" $cmd --help >> "$out"; then
				echo "    mrcctl $cmd --help failed" >&2
				return 1
			fi
		done < <(mrcctl_commands)
		;;
	esac
}

# The README's block of PROG, without its fences.
readme_block() {
	awk -v tag="<!-- help: $1 -->" '
		$0 == tag { found = 1; next }
		found && /^```/ { if (inside) exit; inside = 1; next }
		inside' "$ROOT/README.md"
}

# Every line of the README's block is a line of --help.
readme_matches() {
	local prog=$1 help=$2 line bad=0
	readme_block "$prog" > "$help.readme"
	if [ ! -s "$help.readme" ]; then
		echo "    README.md has no usage block of $prog (<!-- help: $prog -->)" >&2
		return 1
	fi
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		if ! grep -qxF -- "$line" "$help"; then
			echo "    README.md, $prog: not in --help: '$line'" >&2
			bad=1
		fi
	done < "$help.readme"
	return $bad
}

for prog in mrcd mrcctl mrc-perf mrc-lab; do
	begin "help.${prog//-/_}"
	page="$MAN/$prog.8"
	if [ ! -f "$page" ]; then
		check "man page $page exists" false
	elif check "$prog --help exits 0" help_of "$prog" "$tmp/$prog.help"; then
		check "$prog --help and $prog.8 list the same long options" \
			compare "$prog" "$tmp/$prog.help" "$page" "OPTIONS|COMMANDS"
		check "the README shows $prog's usage as --help prints it" \
			readme_matches "$prog" "$tmp/$prog.help"
	fi
	end
done
