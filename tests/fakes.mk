# Build the test fakes without the autotools build:
#	make -f tests/fakes.mk [SANITIZE=1]
# The router's Makefile.am lists the same sources.

CC?=		cc
CFLAGS?=	-O2
WARNFLAGS=	-std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror
LIBS=		-lcrypto -lpthread


SANFLAGS_1=	-fsanitize=address,undefined -fno-omit-frame-pointer -g
SANFLAGS=	$(SANFLAGS_$(SANITIZE))

FAKES=		tests/fakert tests/faketool

all: $(FAKES)

PROTO=		tests/helpers/fakeproto.c
PROTO_H=	tests/helpers/fakeproto.h tests/helpers/le.h tests/helpers/sha256.h
RT=		tests/helpers/fakert.c tests/helpers/fakertcore.c
TOOL=		tests/helpers/faketool.c tests/helpers/faketoolcore.c

tests/fakert: $(RT) $(PROTO) tests/helpers/fakertcore.h $(PROTO_H)
	$(CC) $(WARNFLAGS) $(CFLAGS) $(SANFLAGS) -o $@ $(RT) $(PROTO) $(LIBS)

tests/faketool: $(TOOL) $(PROTO) tests/helpers/faketoolcore.h $(PROTO_H)
	$(CC) $(WARNFLAGS) $(CFLAGS) $(SANFLAGS) -o $@ $(TOOL) $(PROTO) $(LIBS)

check: $(FAKES)
	sh tests/fakes-selftest.sh

clean:
	rm -f $(FAKES)

.PHONY: all check clean
