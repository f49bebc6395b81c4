#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Regenerate the build system from configure.ac and Makefile.am.
exec autoreconf -fi
