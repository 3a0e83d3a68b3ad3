# bash completion for erofskit(1).
#
# The commands and each command's options are read from the --help texts
# of the erofskit being completed, so they follow the binary; the values
# of a few options (-z, -E, --engine, -b, -o) are listed here, and
# tests/integration/t_install.sh holds them to the --help texts.

# _erofskit_commands PROG: the commands `PROG --help` lists.
_erofskit_commands()
{
	"$1" --help 2>/dev/null | awk '
		/^commands:/ { on = 1; next }
		on && /^  [a-z]/ { print $1; next }
		on { on = 0 }'
}

# _erofskit_options PROG CMD: one line per option that `PROG CMD --help`
# lists, "-x" or "--long", followed by " ARG" when it takes an argument.
_erofskit_options()
{
	"$1" "$2" --help 2>/dev/null | awk '
		/^options:/ { on = 1; next }
		on && /^[^ ]/ { on = 0 }
		on && /^ +-/ {
			n = 0
			for (i = 1; i <= NF; i++) {
				if ($i !~ /^-/)
					break
				opt = $i
				sub(/,$/, "", opt)
				names[++n] = opt
				if ($i !~ /,$/) {
					i++
					break
				}
			}
			arg = (i <= NF && $i ~ /^[A-Z]/) ? " ARG" : ""
			for (j = 1; j <= n; j++)
				print names[j] arg
		}'
}

# _erofskit_reply CMD...: COMPREPLY is CMD's output, a word a line.
_erofskit_reply()
{
	mapfile -t COMPREPLY < <("$@")
}

_erofskit()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' prog=${COMP_WORDS[0]} cmd opts
	local algs="lz4 lz4hc deflate zstd lzma"
	local engines="libdeflate isal zlib builtin liblzma"
	local remote_opts="insecure cacert= header= token= timeout= retries= cache_dir= cache_max= prefetch=all credentials= plain_http"
	local mount_opts="cache= io=pread io=uring engine= workers= device= offset= uid= gid= allow_other $remote_opts"
	local push_opts="insecure cacert= credentials= plain_http header= timeout= retries="
	local registry_opts="$push_opts downloads="
	local layouts="ztailpacking fragments all-fragments dedupe fragdedupe= noinline_data dot-omitted xattr-name-filter force-inode-compact force-inode-extended force-chunk-indexes force-inode-blockmap nosbcrc legacy-compress"
	COMPREPLY=()
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}

	if [ "$COMP_CWORD" -le 1 ]; then
		_erofskit_reply compgen -W "$(_erofskit_commands "$prog") -h --help -V --version" -- "$cur"
		return 0
	fi
	cmd=${COMP_WORDS[1]}

	# The value of the option before.
	case $cmd:$prev in
	mkfs:-z)
		_erofskit_reply compgen -W "$algs" -- "$cur"
		return 0 ;;
	*:--engine)
		_erofskit_reply compgen -W "$engines" -- "$cur"
		return 0 ;;
	mkfs:-b)
		_erofskit_reply compgen -W "512 1024 2048 4096" -- "$cur"
		return 0 ;;
	mkfs:-U)
		_erofskit_reply compgen -W "random" -- "$cur"
		return 0 ;;
	fsck:--extract)
		compopt -o filenames 2>/dev/null || true
		_erofskit_reply compgen -d -- "$cur"
		return 0 ;;
	fsck:--device | dump:--device | mkfs:--blobdev)
		compopt -o filenames 2>/dev/null || true
		_erofskit_reply compgen -f -- "$cur"
		return 0 ;;
	mkfs:-E | mkfs:-o | mount:-o | fsck:-o | dump:-o | push:-o)
		# Comma lists, completed after their last comma: cache=1G,en<TAB>
		local done='' list=$remote_opts
		[ "$cmd:$prev" = mkfs:-E ] && list=$layouts
		[ "$cmd:$prev" = mkfs:-o ] && list=$registry_opts
		[ "$cmd" = push ] && list=$push_opts
		[ "$cmd" = mount ] && list=$mount_opts
		case $cur in *,*) done=${cur%,*},; esac
		compopt -o nospace 2>/dev/null || true
		_erofskit_reply compgen -P "$done" -W "$list" -- "${cur##*,}"
		return 0 ;;
	esac
	opts=$(_erofskit_options "$prog" "$cmd")
	if grep -qxF -- "$prev ARG" <<<"$opts"; then
		return 0   # an argument nothing here knows how to complete
	fi

	case $cmd:$cur in
	mkfs:-z?*)   # -zALG in one word, as mkfs.erofs takes it
		_erofskit_reply compgen -P -z -W "$algs" -- "${cur#-z}"
		return 0 ;;
	*:-*)
		_erofskit_reply compgen -W "$(cut -d' ' -f1 <<<"$opts")" -- "$cur"
		return 0 ;;
	esac
	compopt -o filenames 2>/dev/null || true
	_erofskit_reply compgen -f -- "$cur"
	return 0
}
complete -F _erofskit erofskit
