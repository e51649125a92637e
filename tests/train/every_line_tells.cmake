# every_line_tells(case err regex): each "trinity-train: ..." line of stderr `err` must match `regex`. A step that
# fails on one rank stops all (comm::agreed), and mpirun aborts the rest when the first process exits and may keep
# only its line, so every process's line must tell the reason, not only the failing rank's.
function(every_line_tells case err regex)
  # (a list of the lines: their semicolons, which would split one, stand in as another byte)
  string(ASCII 1 semicolon)
  string(REPLACE ";" "${semicolon}" err "${err}")
  string(REPLACE ";" "${semicolon}" regex "${regex}")
  string(REGEX MATCHALL "trinity-train: [^\n]*" lines "${err}")
  foreach(line IN LISTS lines)
    if(NOT line MATCHES "${regex}")
      message(FATAL_ERROR "${case}: a process stopped without the reason ('${regex}'): ${line}")
    endif()
  endforeach()
endfunction()
