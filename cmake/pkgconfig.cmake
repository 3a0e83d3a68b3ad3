# Writes erofskit.pc for the prefix the files are installed to, which
# `cmake --install --prefix` may change after configuring: run at install
# time with EK_PC_IN, EK_PC_OUT, EK_PC_VERSION, EK_PC_LIBDIR_REL and
# EK_PC_INCLUDEDIR_REL (GNUInstallDirs' values) set, and
# CMAKE_INSTALL_PREFIX as the install script has it.  libdir and includedir
# stay relative to ${prefix} when they are, so that
# `pkg-config --define-variable=prefix=...` relocates them.
set(EK_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${EK_PC_${dir}_REL}")
    set(EK_PC_${dir} "${EK_PC_${dir}_REL}")
  else()
    set(EK_PC_${dir} "\${prefix}/${EK_PC_${dir}_REL}")
  endif()
endforeach()
configure_file("${EK_PC_IN}" "${EK_PC_OUT}" @ONLY)
