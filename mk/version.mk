# mk/version.mk: the version stamped into the build (scripts/version.sh: VERSION plus the git
# commit, e.g. 0.9.0+f691226). $(BUILD)/version.h defines XCHG_VERSION; shim/version.c
# compiles it into the library (xchg_version(), shim/api.h), the tools that link the library
# call that, and those that do not (xchg-sched, xchg-sim) include the header themselves.
#
# The header is made again on every make that needs it, but written only when the version
# changed (a new commit, a tree that became dirty or clean), so that a make with nothing new
# rebuilds nothing and a new commit rebuilds version.o and what links it, not everything.

VERSION_H := $(BUILD)/version.h
VERSION_USERS := $(BUILD)/obj/shim/version.o $(BUILD)/xchg-sched $(BUILD)/obj/sim/main.o

.PHONY: version-check
$(VERSION_H): version-check
	@mkdir -p $(dir $@)
	@scripts/version.sh --header >$@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(VERSION_USERS): $(VERSION_H)
$(VERSION_USERS): CFLAGS += -I$(BUILD)
