# mk/install.mk: make install and make uninstall (docs/install.md; scripts/install.sh does the
# work and says what goes where).
#
#   make && make install [PREFIX=/usr/local] [DESTDIR=STAGE]
#   make uninstall [PREFIX=/usr/local] [DESTDIR=STAGE]
#
# Install copies what is built and builds nothing (so that `sudo make install` after `make`
# writes nothing into build/): the MPICH build of build/ (required), and the Open MPI build of
# build/openmpi/ when its library is there (`make MPI=openmpi` first). Uninstall removes what
# the install listed in PREFIX/share/xchg/install-manifest.txt and nothing else.

PREFIX ?= /usr/local
# every tool the build makes (mk and sim topics add theirs: the simulator, the projections),
# and those of them that run MPI, which the Open MPI build installs as NAME.openmpi
INSTALL_TOOLS := $(sort $(notdir $(TOOLS)) $(if $(wildcard sim/sim.mk),xchg-sim) \
                   $(if $(wildcard sim/project.mk),xchg-project))
INSTALL_MPI_TOOLS := $(filter-out xchg-sched,$(notdir $(TOOLS)))

.PHONY: install uninstall
install:
	@DESTDIR='$(DESTDIR)' INSTALL_TOOLS='$(INSTALL_TOOLS)' \
	  INSTALL_MPI_TOOLS='$(INSTALL_MPI_TOOLS)' scripts/install.sh install '$(PREFIX)'

uninstall:
	@DESTDIR='$(DESTDIR)' scripts/install.sh uninstall '$(PREFIX)'
