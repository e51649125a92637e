# Extracts the code blocks of a Markdown file at configure time, so the docs are
# compiled and run by the test suite instead of copied into it by hand.
#
#   trinity_extract_doc_blocks(<file.md> <out-dir> <prefix> <cpp-list-var> <sh-var>)
#
# Every ```cpp block becomes <out-dir>/<prefix>_L<line>.cpp. A block with its own
# `int main(` is compiled as written; otherwise its #include lines go to file
# scope and the rest runs inside main(). Every ```sh block of the file is
# appended, in order, to <out-dir>/<prefix>.sh, a bash script run from a clean
# work directory (tests/docs).
#
# An HTML comment on the line right before a block (invisible when rendered)
# tells the test what the reader does not need to see:
#
#   <!-- doc-test
#   #include <vector>
#   std::vector<float> gradient(1 << 20, 0.5f);    code run before the block
#   ---
#   std::cout << frame.size() << '\n';             code run after it
#   -->
#   <!-- doc-test: compile-only (why) -->           compiled, not run
#   <!-- doc-test: file-scope                       the block (and the code before it) at file scope,
#   ---                                             for a block that defines functions; the code after
#   train(...);                                     it is main's body
#   -->
#   <!-- doc-test: skip (why) -->                   a shell block not run here
#
# <cpp-list-var> receives "<file>|<line>|<compile-only>" entries; <sh-var> the
# script's path, or "" when the file has no shell block.
#
# CMake lists split on ';' and treat '[' ']' and '\' specially, so the text is
# escaped while it is handled line by line, and restored when written.

function(trinity_doc_escape out text)
  string(REPLACE "\\" "@BS@" text "${text}")
  string(REPLACE ";" "@SC@" text "${text}")
  string(REPLACE "[" "@LB@" text "${text}")
  string(REPLACE "]" "@RB@" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(trinity_doc_unescape out text)
  string(REPLACE "@SC@" ";" text "${text}")
  string(REPLACE "@LB@" "[" text "${text}")
  string(REPLACE "@RB@" "]" text "${text}")
  string(REPLACE "@BS@" "\\" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Writes `content` to `path` only when it changed, so an unchanged block is not rebuilt.
function(trinity_doc_write path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()

function(trinity_extract_doc_blocks md out_dir prefix cpp_var sh_var)
  file(READ "${md}" text)
  trinity_doc_escape(text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  file(MAKE_DIRECTORY "${out_dir}")
  get_filename_component(md_name "${md}" NAME)

  set(cpp_entries "")
  set(sh_text "")
  set(state text)            # text | comment | cpp | sh | other
  set(line_no 0)
  set(pending_flags "")      # from a doc-test comment, for the next fence
  set(pending_before "")
  set(pending_after "")
  set(pending_line -1)
  foreach(line IN LISTS lines)
    math(EXPR line_no "${line_no} + 1")
    if(state STREQUAL "comment")
      if(line MATCHES "^-->")
        set(state text)
        set(pending_line ${line_no})
      elseif(line STREQUAL "---")
        set(comment_part after)
      elseif(comment_part STREQUAL "before")
        string(APPEND pending_before "${line}\n")
      else()
        string(APPEND pending_after "${line}\n")
      endif()
      continue()
    endif()
    if(state STREQUAL "text")
      if(line MATCHES "^<!-- doc-test(.*)$")
        set(rest "${CMAKE_MATCH_1}")
        set(pending_before "")
        set(pending_after "")
        set(pending_flags "")
        set(comment_part before)
        if(rest MATCHES "^: *([a-z-]+)")
          set(pending_flags "${CMAKE_MATCH_1}")
        endif()
        if(rest MATCHES "-->$")
          set(pending_line ${line_no})
        else()
          set(state comment)
        endif()
        continue()
      endif()
      if(line MATCHES "^```(cpp|sh|[a-z]*)$")
        set(lang "${CMAKE_MATCH_1}")
        math(EXPR just_before "${line_no} - 1")
        if(NOT pending_line EQUAL just_before)
          set(pending_flags "")
          set(pending_before "")
          set(pending_after "")
        endif()
        set(block "")
        set(block_line ${line_no})
        if(lang STREQUAL "cpp")
          set(state cpp)
        elseif(lang STREQUAL "sh")
          set(state sh)
        else()
          set(state other)
        endif()
        continue()
      endif()
      continue()
    endif()
    # Inside a fenced block.
    if(line MATCHES "^```$")
      if(state STREQUAL "cpp")
        set(includes "")
        set(body "")
        set(has_main FALSE)
        if(block MATCHES "int main\\(")
          set(has_main TRUE)
        endif()
        set(file_scope FALSE)
        if(pending_flags STREQUAL "file-scope")
          set(file_scope TRUE)
        endif()
        string(REPLACE "\n" ";" block_lines "${pending_before}${block}")
        set(src "// Extracted from ${md_name}, the block at line ${block_line}, by cmake/doc_blocks.cmake.\n")
        if(has_main)
          foreach(l IN LISTS block_lines)
            string(APPEND src "${l}\n")
          endforeach()
        elseif(file_scope)
          foreach(l IN LISTS block_lines)
            string(APPEND src "${l}\n")
          endforeach()
          string(APPEND src "\n#include <iostream>\n\nint main() {\n${pending_after}  return 0;\n}\n")
        else()
          foreach(l IN LISTS block_lines)
            if(l MATCHES "^#include")
              string(APPEND includes "${l}\n")
            else()
              string(APPEND body "  ${l}\n")
            endif()
          endforeach()
          string(REPLACE "\n" ";" after_lines "${pending_after}")
          foreach(l IN LISTS after_lines)
            if(NOT l STREQUAL "")
              string(APPEND body "  ${l}\n")
            endif()
          endforeach()
          string(APPEND src "${includes}#include <iostream>\n\nint main() {\n${body}  return 0;\n}\n")
        endif()
        trinity_doc_unescape(src "${src}")
        set(path "${out_dir}/${prefix}_L${block_line}.cpp")
        trinity_doc_write("${path}" "${src}")
        set(compile_only 0)
        if(pending_flags STREQUAL "compile-only")
          set(compile_only 1)
        endif()
        list(APPEND cpp_entries "${path}|${block_line}|${compile_only}")
      elseif(state STREQUAL "sh")
        if(pending_flags STREQUAL "skip")
          string(APPEND sh_text "\n# ${md_name}:${block_line}: not run here (see the doc-test comment there)\n")
        else()
          string(APPEND sh_text "\n# ---- ${md_name}:${block_line}\n${block}")
        endif()
      endif()
      set(state text)
      set(pending_flags "")
      set(pending_before "")
      set(pending_after "")
      continue()
    endif()
    string(APPEND block "${line}\n")
  endforeach()
  if(NOT state STREQUAL "text")
    message(FATAL_ERROR "${md}: a code block or doc-test comment is not closed")
  endif()

  set(sh_path "")
  if(NOT sh_text STREQUAL "")
    set(sh_path "${out_dir}/${prefix}.sh")
    trinity_doc_unescape(sh_text "${sh_text}")
    trinity_doc_write("${sh_path}" "# The shell blocks of ${md_name}, in order (cmake/doc_blocks.cmake).\n${sh_text}")
  endif()
  set(${cpp_var} "${cpp_entries}" PARENT_SCOPE)
  set(${sh_var} "${sh_path}" PARENT_SCOPE)
endfunction()
