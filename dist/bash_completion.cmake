# Writes sched's bash completion (cmake -DSCHED=<sched> -DOUT=<file> -P ...)
# from `sched --help` and each subcommand's --help: the subcommands and the
# long options CLI11 lists, one level of subcommands deep (cluster up, ...).

# The subcommands and long options one --help lists.
function(sched_help_words)
  execute_process(COMMAND ${SCHED} ${ARGN} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sched ${ARGN} --help failed (${rc})")
  endif()
  string(REPLACE "\n" ";" lines "${help}")
  set(section "")
  set(subs)
  set(opts)
  foreach(line IN LISTS lines)
    if(line MATCHES "^[A-Za-z][A-Za-z ]*:$")
      string(TOLOWER "${line}" section)
    elseif(section MATCHES "^subcommands" AND line MATCHES "^  ([a-z][a-z0-9_-]*)")
      list(APPEND subs ${CMAKE_MATCH_1})
    elseif(line MATCHES "^  (-[A-Za-z0-9],)?(--[a-z0-9][a-z0-9-]*)")
      list(APPEND opts ${CMAKE_MATCH_2})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES subs)
  list(REMOVE_DUPLICATES opts)
  set(subs ${subs} PARENT_SCOPE)
  set(opts ${opts} PARENT_SCOPE)
endfunction()

sched_help_words()
set(top_subs ${subs})
list(JOIN subs " " top_words)
list(JOIN opts " " top_opts)
set(cases "")
foreach(sub IN LISTS top_subs)
  sched_help_words(${sub})
  set(words ${subs} ${opts})
  list(JOIN words " " words)
  string(APPEND cases "    ${sub}) words=\"${words}\" ;;\n")
  foreach(second IN LISTS subs)
    sched_help_words(${sub} ${second})
    list(JOIN opts " " words)
    string(APPEND cases "    \"${sub} ${second}\") words=\"${words}\" ;;\n")
  endforeach()
endforeach()

file(WRITE ${OUT} "# bash completion for sched: written from `sched --help` when sched was
# built (dist/bash_completion.cmake). Completes subcommands and long options;
# files otherwise.
_sched() {
  local cur words path=\"\" i
  cur=\"\${COMP_WORDS[COMP_CWORD]}\"
  # The subcommand path so far: the words before the cursor that are no option.
  for ((i = 1; i < COMP_CWORD; i++)); do
    case \"\${COMP_WORDS[i]}\" in
      -*) ;;
      *) if [[ -z \"\$path\" ]] || [[ \"\$path\" != *' '* ]]; then
           path=\"\${path:+\$path }\${COMP_WORDS[i]}\"
         fi ;;
    esac
  done
  case \"\$path\" in
    \"\") words=\"${top_words} ${top_opts}\" ;;
${cases}    *) words=\"\" ;;
  esac
  if [[ \"\$cur\" == -* || -n \"\$words\" && \"\$cur\" != */* ]]; then
    COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))
  fi
  if [[ \${#COMPREPLY[@]} -eq 0 ]]; then
    COMPREPLY=(\$(compgen -f -- \"\$cur\"))
  fi
}
complete -F _sched sched
")
