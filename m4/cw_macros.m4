# cw_macros.m4 - small helpers for configure.ac.

# CW_WARN_CFLAGS(FLAGS): append to WARN_CFLAGS each flag the compiler accepts.
AC_DEFUN([CW_WARN_CFLAGS], [
  for cw_flag in $1; do
    AC_MSG_CHECKING([whether $CC accepts $cw_flag])
    cw_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $cw_flag"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AC_MSG_RESULT([yes]); WARN_CFLAGS="$WARN_CFLAGS $cw_flag"],
      [AC_MSG_RESULT([no])])
    CFLAGS=$cw_save_CFLAGS
  done
])

# CW_REQUIRE_PKG(VAR, MODULE, DEBIAN-PACKAGE): pkg-config or a clear error.
AC_DEFUN([CW_REQUIRE_PKG], [
  PKG_CHECK_MODULES([$1], [$2], [],
    [AC_MSG_ERROR([$2 not found by pkg-config: install the Debian package $3 (apt-get install $3)])])
])

# AX_PTHREAD_SIMPLE: -pthread, which gcc and clang both take.
AC_DEFUN([AX_PTHREAD_SIMPLE], [
  PTHREAD_CFLAGS=-pthread
  PTHREAD_LIBS=-pthread
  AC_SUBST([PTHREAD_CFLAGS])
  AC_SUBST([PTHREAD_LIBS])
])
