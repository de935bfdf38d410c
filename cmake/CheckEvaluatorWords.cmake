# pyeval/ is the generic Python evaluator; what Megatron Bridge, Megatron Core or Hugging Face do at run time is its
# host's (parser/bridge/, through pyeval/host.hpp). Fails when a file of the folder names them: a word that belongs
# to the host has crept into the evaluator (docs/development.md, "Layers").
#
#   cmake -DFOLDER=<pyeval folder> -P CheckEvaluatorWords.cmake
cmake_minimum_required(VERSION 3.22)
set(words "[Bb]ridge|BRIDGE|[Pp]rovider|ConfigContainer|TransformerConfig|[Mm]egatron|MEGATRON|mcore|MCORE|HF|Hf[A-Z]|hf_|[Hh]ugging")
file(GLOB_RECURSE sources LIST_DIRECTORIES false ${FOLDER}/*)
set(found "")
foreach(source IN LISTS sources)
  file(STRINGS ${source} lines REGEX "${words}")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "${words}" word "${line}")
    file(RELATIVE_PATH name ${FOLDER} ${source})
    list(APPEND found "${name}: \"${word}\" in: ${line}")
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " text)
  message(FATAL_ERROR "the evaluator names what belongs to its host:\n  ${text}\n"
                      "Move that knowledge into the host (parser/bridge/) behind pyeval/host.hpp.")
endif()
