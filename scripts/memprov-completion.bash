# memprov-completion.bash - bash completion for memprov (installed by
# make install as PREFIX/share/bash-completion/completions/memprov).
#
# Subcommands and options come from memprov itself (`memprov --help`,
# `memprov help SUBCOMMAND`), so they always match the program; traces
# complete to *.trace files, --kind to the memory kinds, --color to its
# values, and the command after `memprov run --` as any command.

_memprov_subcommands()
{
	"$1" --help 2>/dev/null | sed -n 's/^  memprov \([a-z]*\)\( .*\)\{0,1\}$/\1/p' | sort -u
}

_memprov_options()
{
	"$1" help "$2" 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | grep -vx -- --color | sort -u
	echo --color=
}

_memprov()
{
	local cur prev words cword prog sub i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	prog=${COMP_WORDS[0]}
	sub=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--color*) ;;
		-*) ;;
		*) sub=${COMP_WORDS[i]}; break ;;
		esac
	done

	if [[ -z $sub ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W '--help --version --color=' -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_memprov_subcommands "$prog")" -- "$cur"))
		fi
		return 0
	fi

	# `memprov run ... -- CMD ARGS`: complete CMD as a command, then its files
	if [[ $sub == run ]]; then
		for ((i = 2; i < COMP_CWORD; i++)); do
			if [[ ${COMP_WORDS[i]} == -- ]]; then
				if ((i + 1 == COMP_CWORD)); then
					COMPREPLY=($(compgen -c -- "$cur"))
				else
					COMPREPLY=($(compgen -f -- "$cur"))
				fi
				return 0
			fi
		done
	fi

	case $prev in
	-o|--output|--junit|--suppressions|--json-file|--parent)
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0 ;;
	--kind)
		COMPREPLY=($(compgen -W 'heap mmap pinned device managed registered' -- "$cur"))
		return 0 ;;
	-d|--dir)
		COMPREPLY=($(compgen -d -- "$cur"))
		return 0 ;;
	--points|--skip|--min-bytes|--min-gap|--max-leak|--max-growth|--after|--mark-on|--skip-exe|--alloc-fn|--gate-status|--jobs)
		return 0 ;;
	esac

	case $cur in
	--color=*)
		COMPREPLY=($(compgen -W 'auto always never' -- "${cur#--color=}"))
		return 0 ;;
	-*)
		COMPREPLY=($(compgen -W "$(_memprov_options "$prog" "$sub")" -- "$cur"))
		[[ ${COMPREPLY[0]-} == *= ]] && compopt -o nospace 2>/dev/null
		return 0 ;;
	esac

	case $sub in
	help)
		COMPREPLY=($(compgen -W "$(_memprov_subcommands "$prog")" -- "$cur")) ;;
	version|run)
		;;
	merge)
		# summaries: leaks --json / growth --json outputs
		COMPREPLY=($(compgen -f -X '!*.json*' -- "$cur") $(compgen -d -- "$cur"))
		compopt -o filenames 2>/dev/null ;;
	*)
		# traces, and directories to look into
		COMPREPLY=($(compgen -f -X '!*.trace' -- "$cur") $(compgen -d -- "$cur"))
		compopt -o filenames 2>/dev/null ;;
	esac
	return 0
}
complete -F _memprov memprov
