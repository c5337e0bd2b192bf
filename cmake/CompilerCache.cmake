# A compiler cache when one is installed (scripts/bootstrap installs ccache for
# `make test`), for the main build and fuzz/'s clang build alike. CI builds a
# fresh clone in a new folder each time, so the cache ignores where the tree
# is: base_dir is the source tree (paths under it, the build tree's generated
# sources included, hash as relative ones) and the working directory is not
# hashed (debug info then names the folder of the build that filled the
# cache). A compile whose inputs changed misses and compiles as without it.
# Off with -DPLIMSOLL_CCACHE=OFF, or when a launcher is already set.
get_filename_component(plimsoll_source_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
option(PLIMSOLL_CCACHE "Compile through ccache when it is installed" ON)
find_program(PLIMSOLL_CCACHE_PROGRAM ccache)
if(PLIMSOLL_CCACHE AND PLIMSOLL_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(plimsoll_launcher
      ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${plimsoll_source_root} CCACHE_NOHASHDIR=true
      CCACHE_MAXSIZE=12G
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${PLIMSOLL_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${plimsoll_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${plimsoll_launcher})
endif()
