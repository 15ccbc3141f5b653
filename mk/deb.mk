# Debian packages (issue 33): `make deb` builds, from this tree,
#   liblockstep0.MINOR  the shared library (its SONAME, liblockstep.so.0.MINOR),
#   liblockstep-dev     headers, liblockstep.a, the .so link, lockstep.pc, the CMake package,
#   lockstep            the CLI, its manual page and scenes,
# with dpkg-buildpackage and debhelper into $(BUILD)/deb/, then runs lintian on
# them: any error or warning fails the target. `make test-deb` (part of `make
# test`) installs them into a scratch root and builds and runs the examples
# against that root with pkg-config and with CMake (tests/library/deb.sh).
#
# Why a copy: dpkg-buildpackage wants debian/ at the top of the source tree,
# and the tree stays free of it. The packaging lives in tools/debian/; the
# copy in $(DEB_SRC) gets it as debian/ with the version-dependent names
# filled in (the library package and its .install file carry the SONAME's
# 0.MINOR) and a changelog entry for this version. The copy holds git's
# files (tracked and untracked, not ignored), so uncommitted edits are in.
DEPS_PKGS += debhelper dpkg-dev fakeroot lintian
DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/lockstep-$(LS_VERSION)
DEB_MAINTAINER ?= Seed a005ab38 maintainers <maintainers@users.noreply.a-seed-a005ab38.example>
# parallel=2: dh_auto_build runs make -j2 (the machines this runs on have 2 cores).
# noddebs: no -dbgsym packages (the .debs keep no debug info; `make deb
# DEB_BUILD_OPTIONS=` makes them too).
DEB_BUILD_OPTIONS ?= parallel=2 noddebs
# The packages' date: the last commit's, so a rebuild of a commit gives the same changelog.
DEB_DATE = $(shell { git log -1 --format=%cD 2>/dev/null || date -R; } | head -1)
DEBS = $(DEB_DIR)/liblockstep$(LS_ABI)_$(LS_VERSION)_$(DEB_ARCH).deb \
  $(DEB_DIR)/liblockstep-dev_$(LS_VERSION)_$(DEB_ARCH).deb $(DEB_DIR)/lockstep_$(LS_VERSION)_$(DEB_ARCH).deb
DEB_ARCH = $(shell dpkg --print-architecture)

.PHONY: deb test-deb
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	@if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  git ls-files -z --cached --others --exclude-standard | tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(DEB_SRC); \
	else \
	  tar --exclude=./build --exclude='./build-*' --exclude='./$(BUILD)' -cf - . | tar -xf - -C $(DEB_SRC); \
	fi
	rm -rf $(DEB_SRC)/debian && cp -r tools/debian $(DEB_SRC)/debian
	sed -e 's|@ABI@|$(LS_ABI)|g' -e 's|@MAJOR_MINOR@|$(LS_MAJOR).$(LS_MINOR)|g' \
	  -e 's|@MAINTAINER@|$(DEB_MAINTAINER)|g' tools/debian/control.in > $(DEB_SRC)/debian/control
	sed -e 's|@ABI@|$(LS_ABI)|g' -e 's|@VERSION@|$(LS_VERSION)|g' tools/debian/liblockstep.install.in \
	  > $(DEB_SRC)/debian/liblockstep$(LS_ABI).install
	rm $(DEB_SRC)/debian/*.in
	printf 'lockstep (%s) unstable; urgency=medium\n\n  * Release %s (the changes: /usr/share/doc/lockstep/CHANGELOG.md.gz).\n\n -- %s  %s\n' \
	  '$(LS_VERSION)' '$(LS_VERSION)' '$(DEB_MAINTAINER)' '$(DEB_DATE)' > $(DEB_SRC)/debian/changelog
	cd $(DEB_SRC) && DEB_BUILD_OPTIONS='$(DEB_BUILD_OPTIONS)' dpkg-buildpackage -b -us -uc >../build.log 2>&1 || \
	  { tail -40 ../build.log; echo "deb: dpkg-buildpackage failed: $(DEB_DIR)/build.log"; exit 1; }
	lintian --fail-on error,warning --info --no-tag-display-limit $(DEB_DIR)/lockstep_$(LS_VERSION)_$(DEB_ARCH).changes
	@echo "deb: lintian: no error or warning"
	@ls -1 $(DEBS)

test-deb: deb $(LIB_A)
	sh tests/library/deb.sh $(BUILD) $(DEBS)
