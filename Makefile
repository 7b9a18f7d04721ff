# glassbox — build, test, install.  Quiet by default; `make V=1` prints full command lines.
# Run ./configure first: it writes config.mk (dependencies, PREFIX, HAVE_SDL2).

-include config.mk
ifeq ($(DEP_LIBS),)
$(error config.mk missing or empty: run ./configure first)
endif

CC      ?= cc
OPT     ?= -O2
CFLAGS  ?= $(OPT) -g
LDFLAGS ?=
WARN     = -Wall -Wextra -Wno-unused-parameter
# SANITIZE=address,undefined builds everything (objects, program, tests) with those sanitizers
# into build/san (the program build/san/glassbox), beside the normal build, which it leaves
# alone; tests/sanitize.env says how the tests run then. Given CFLAGS and LDFLAGS are kept.
SANITIZE ?=
SAN_FLAGS = $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all)
ALLCFLAGS = -std=gnu11 $(WARN) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -I. -MMD -MP $(DEP_CFLAGS) -DHAVE_SDL2=$(HAVE_SDL2) \
            -DGLASSBOX_VERSION=\"$(VERSION)\" -DGLASSBOX_DATADIR=\"$(PREFIX)/share/glassbox\"
ALLLDFLAGS = $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS)
LDLIBS   = $(DEP_LIBS)
VERSION  = 0.1.0
DESTDIR ?=
BIN_DIR  = $(DESTDIR)$(PREFIX)/bin
DATA_DIR = $(DESTDIR)$(PREFIX)/share/glassbox
MAN_DIR  = $(DESTDIR)$(PREFIX)/share/man
# Where each shell looks for completions under PREFIX (Debian's zsh reads vendor-completions
# under /usr: debian/rules says so).
BASH_COMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPDIR  ?= $(PREFIX)/share/zsh/site-functions
FISH_COMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d

ifeq ($(V),1)
Q =
say = @true
else
Q = @
say = @printf '  %-6s %s\n'
endif

# Everything the build writes goes under build/ (objects and dependency files mirror the source
# tree), except the program itself at the top, where the README's commands expect it. A
# sanitized build has a folder and a program of its own (PROG): the two never mix.
B    = $(if $(SANITIZE),build/san,build)
PROG = $(if $(SANITIZE),$(B)/glassbox,glassbox)
# model/kernels/simd.c is one source compiled once per vector width (its opening comment says
# how); the wildcard leaves it out and the rules below build it twice.
SIMD_SRC  = model/kernels/simd.c
SIMD_OBJ  = $(B)/model/kernels/simd_avx2.o $(B)/model/kernels/simd_avx512.o
MODEL_SRC = $(filter-out $(SIMD_SRC),$(wildcard model/*.c model/*/*.c))
VIZ_SRC   = $(wildcard viz/*.c)
APP_SRC   = $(wildcard app/*.c app/*/*.c)
LIB_OBJ   = $(patsubst %.c,$(B)/%.o,$(MODEL_SRC) $(VIZ_SRC)) $(SIMD_OBJ)
APP_OBJ   = $(patsubst %.c,$(B)/%.o,$(APP_SRC))
TEST_SRC  = $(wildcard tests/t_*.c)
TEST_BIN  = $(patsubst tests/%.c,$(B)/tests/%.t,$(TEST_SRC))
TEST_SH   = $(wildcard tests/t_*.sh)
# the fuzz harnesses again, with a plain main (tests/fuzz/replay.c) for t_fuzz_replay.sh
FUZZ_SRC  = $(wildcard tests/fuzz/fz_*.c)
REPLAY_BIN = $(patsubst tests/fuzz/%.c,$(B)/tests/%.replay,$(FUZZ_SRC))

# ar keeps members by file name alone: two sources with one name in different folders would
# silently replace each other in the library.
DUP_NAMES = $(strip $(foreach n,$(sort $(notdir $(LIB_OBJ))),$(if $(word 2,$(filter %/$(n),$(LIB_OBJ))),$(n))))
ifneq ($(DUP_NAMES),)
$(error two library sources share a file name: $(DUP_NAMES))
endif

all: $(PROG) man completion

# Objects remember the compiler and flags they were built with: changing CC, CFLAGS or
# SANITIZE rebuilds everything instead of mixing sanitized and plain objects.
BUILD_FLAGS = $(CC) | $(ALLCFLAGS) | $(ALLLDFLAGS) | $(SIMD_CFLAGS)
$(B)/flags: FORCE
	@mkdir -p $(@D)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(BUILD_FLAGS)' ]; then printf '%s\n' '$(BUILD_FLAGS)' >$@; fi

$(PROG): $(APP_OBJ) $(B)/libglassbox.a
	$(say) LINK $@
	$(Q)$(CC) $(ALLLDFLAGS) -o $@ $(APP_OBJ) $(B)/libglassbox.a $(LDLIBS)

ifneq ($(SANITIZE),)
glassbox: $(PROG)
.PHONY: glassbox
endif

$(B)/libglassbox.a: $(LIB_OBJ)
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $(LIB_OBJ)

$(LIB_OBJ) $(APP_OBJ) $(TEST_BIN) $(REPLAY_BIN): $(B)/flags

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(ALLCFLAGS) -c -o $@ $<

$(B)/model/kernels/simd_avx2.o: $(SIMD_SRC)
	@mkdir -p $(@D)
	$(say) CC '$< (avx2)'
	$(Q)$(CC) $(ALLCFLAGS) $(SIMD_CFLAGS) -DGB_SIMD_WIDTH=8 -c -o $@ $<

$(B)/model/kernels/simd_avx512.o: $(SIMD_SRC)
	@mkdir -p $(@D)
	$(say) CC '$< (avx512)'
	$(Q)$(CC) $(ALLCFLAGS) $(SIMD_CFLAGS) -DGB_SIMD_WIDTH=16 -c -o $@ $<

$(B)/tests/%.t: tests/%.c $(B)/libglassbox.a tests/tap.h
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(ALLCFLAGS) $(ALLLDFLAGS) -o $@ $< $(TEST_OBJ) $(B)/libglassbox.a $(LDLIBS)

# A test of an app/ module of pure functions links that module's object as well.
$(B)/tests/t_classroom_proto.t: TEST_OBJ = $(B)/app/classroom_proto.o
$(B)/tests/t_classroom_proto.t: $(B)/app/classroom_proto.o
# The command table's test reads the table and the follower's rule: the app without main().
$(B)/tests/t_commands.t: TEST_OBJ = $(B)/libapp.a
$(B)/tests/t_commands.t: $(B)/libapp.a
# The views of one head on a lazy trace run through a session: the app without main() too.
$(B)/tests/t_headviews.t: TEST_OBJ = $(B)/libapp.a
$(B)/tests/t_headviews.t: $(B)/libapp.a

# The man pages and the shell completions are written by the program from the tables it runs on
# (app/gen.c), so they cannot drift from it.
MAN_OUT  = $(B)/man/glassbox.1 $(B)/man/glassbox-lesson.5
COMP_OUT = $(B)/completion/glassbox.bash $(B)/completion/_glassbox $(B)/completion/glassbox.fish
man: $(MAN_OUT)
completion: $(COMP_OUT)

$(B)/man/glassbox.1: $(PROG)
	@mkdir -p $(@D)
	$(say) GEN $@
	$(Q)./$(PROG) --gen-man 1 >$@.tmp && mv $@.tmp $@
$(B)/man/glassbox-lesson.5: $(PROG) lessons/README.md
	@mkdir -p $(@D)
	$(say) GEN $@
	$(Q)./$(PROG) --gen-man 5 lessons/README.md >$@.tmp && mv $@.tmp $@
$(B)/completion/glassbox.bash: $(PROG)
	@mkdir -p $(@D)
	$(say) GEN $@
	$(Q)./$(PROG) --gen-completion bash >$@.tmp && mv $@.tmp $@
$(B)/completion/_glassbox: $(PROG)
	@mkdir -p $(@D)
	$(say) GEN $@
	$(Q)./$(PROG) --gen-completion zsh >$@.tmp && mv $@.tmp $@
$(B)/completion/glassbox.fish: $(PROG)
	@mkdir -p $(@D)
	$(say) GEN $@
	$(Q)./$(PROG) --gen-completion fish >$@.tmp && mv $@.tmp $@

$(B)/tests/fz_%.replay: tests/fuzz/fz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(B)/libapp.a $(B)/libglassbox.a
	@mkdir -p $(@D)
	$(say) CC $<
	$(Q)$(CC) $(ALLCFLAGS) $(ALLLDFLAGS) -o $@ $< tests/fuzz/replay.c $(B)/libapp.a $(B)/libglassbox.a $(LDLIBS)

tests: $(TEST_BIN) $(REPLAY_BIN)

# CHECK_SH picks the shell tests (CI's sanitizer stage may run fewer) and CHECK_BIN the C test
# programs (all of them unless given); PROVE_FLAGS=-v shows every line. One test alone, sanitized:
#   make check SANITIZE=address,undefined CHECK_BIN= CHECK_SH=tests/t_pdf.sh
# (or CHECK_BIN=build/san/tests/t_forward.t CHECK_SH=). Under SANITIZE the tests get
# tests/sanitize.env (leak suppressions for third-party libraries, GB_SLOW for waits) and
# run in $(B)/root: the tree's files linked, a copy of the sanitized program as ./glassbox (it
# finds assets/ and lessons/ beside itself) and build/ leading to $(B), so the tests' paths
# (./glassbox, build/tests/...) name the sanitized build. SANITIZE is not passed on: there build/
# already is the sanitized build, so a make the tests run (install-files) must use the plain layout.
# Each test runs through tests/san_run.sh: the sanitizers' reports go to files, and a test whose
# processes wrote any fails with them, even where it threw glassbox's stderr and status away.
CHECK_SH ?= $(TEST_SH)
CHECK_BIN ?= $(TEST_BIN)
PROVE_FLAGS ?=
SAN_ROOT  = $(B)/root
# What failing shell tests said (tests/tap.sh: diag), printed after a failed run, where CI's
# short log ends.
TEST_DIAG = $(CURDIR)/$(B)/test-diag.log
DIAG_TAIL = { echo "what the failing tests said ($(TEST_DIAG), its end):"; tail -n 40 $(TEST_DIAG) 2>/dev/null; exit 1; }
check: $(PROG) $(MAN_OUT) $(COMP_OUT) $(TEST_BIN) $(REPLAY_BIN)
	$(Q)rm -f $(TEST_DIAG)
ifeq ($(SANITIZE),)
	GB_TEST_DIAG=$(TEST_DIAG) prove -e '' $(PROVE_FLAGS) $(CHECK_BIN) $(CHECK_SH) || $(DIAG_TAIL)
else
	$(Q)rm -rf $(SAN_ROOT) && mkdir -p $(SAN_ROOT)
	$(Q)for f in $(filter-out build glassbox,$(wildcard *)); do ln -s "$(CURDIR)/$$f" $(SAN_ROOT)/$$f; done
	$(Q)ln -s .. $(SAN_ROOT)/build && cp $(PROG) $(SAN_ROOT)/glassbox
	cd $(SAN_ROOT) && . tests/sanitize.env && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SANITIZE GB_TEST_DIAG=$(TEST_DIAG) prove -e tests/san_run.sh $(PROVE_FLAGS) $(patsubst $(B)/%,build/%,$(CHECK_BIN)) $(CHECK_SH) || $(DIAG_TAIL)
endif

# Fuzzing (tests/fuzz/README.md): one libFuzzer harness per parser, built with clang into
# build/fuzz; `make fuzz FUZZ_SECONDS=N [FUZZ_BUDGET="calc=S ..."]` runs each for N seconds.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_BUDGET  ?=
FUZZ_B        = $(B)/fuzz
FUZZ_BIN      = $(patsubst tests/fuzz/%.c,$(FUZZ_B)/%,$(FUZZ_SRC))
# (the vector kernels are no parser: clang takes many minutes to instrument their intrinsics)
fuzz-build:
	$(Q)$(MAKE) --no-print-directory B=$(FUZZ_B)/obj CC=$(FUZZ_CC) SANITIZE=address,undefined \
		CFLAGS='-O1 -g -fsanitize=fuzzer-no-link' SIMD_CFLAGS=-fno-sanitize=all \
		$(FUZZ_B)/obj/libglassbox.a $(FUZZ_B)/obj/libapp.a
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BIN)
$(FUZZ_B)/fz_%: tests/fuzz/fz_%.c tests/fuzz/fuzz.h $(FUZZ_B)/obj/libglassbox.a $(FUZZ_B)/obj/libapp.a
	$(say) CC $<
	$(Q)$(FUZZ_CC) -std=gnu11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. $(DEP_CFLAGS) \
		-DHAVE_SDL2=$(HAVE_SDL2) -o $@ $< $(FUZZ_B)/obj/libapp.a $(FUZZ_B)/obj/libglassbox.a $(LDLIBS)
fuzz: fuzz-build
	FUZZ_BUDGET='$(FUZZ_BUDGET)' nice -n 19 tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# The app's objects without main(), for the fuzz harnesses of the lesson and command parsers.
$(B)/libapp.a: $(filter-out $(B)/app/main.o,$(APP_OBJ))
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

bench: $(PROG)
	./$(PROG) bench

# install-files copies what is built and builds nothing: PREFIX is compiled into the program
# (its fallback data folder), so `make install PREFIX=...` alone would rebuild every object;
# an installed program finds its data from its own path anyway (../share/glassbox). The tests
# install with it.
install: $(PROG) $(MAN_OUT) $(COMP_OUT)
	$(Q)$(MAKE) --no-print-directory install-files

install-files:
	install -d $(BIN_DIR) $(DATA_DIR) $(MAN_DIR)/man1 $(MAN_DIR)/man5
	install -m 755 $(PROG) $(BIN_DIR)/glassbox
	install -m 644 $(B)/man/glassbox.1 $(MAN_DIR)/man1/glassbox.1
	install -m 644 $(B)/man/glassbox-lesson.5 $(MAN_DIR)/man5/glassbox-lesson.5
	install -d $(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(ZSH_COMPDIR) $(DESTDIR)$(FISH_COMPDIR)
	install -m 644 $(B)/completion/glassbox.bash $(DESTDIR)$(BASH_COMPDIR)/glassbox
	install -m 644 $(B)/completion/_glassbox $(DESTDIR)$(ZSH_COMPDIR)/_glassbox
	install -m 644 $(B)/completion/glassbox.fish $(DESTDIR)$(FISH_COMPDIR)/glassbox.fish
	if [ -d assets ]; then cp -R assets/. $(DATA_DIR)/; fi
	if [ -d lessons ] && ls lessons/* >/dev/null 2>&1; then install -d $(DATA_DIR)/lessons && cp -R lessons/. $(DATA_DIR)/lessons/; fi

uninstall:
	rm -f $(BIN_DIR)/glassbox $(MAN_DIR)/man1/glassbox.1 $(MAN_DIR)/man5/glassbox-lesson.5
	rm -f $(DESTDIR)$(BASH_COMPDIR)/glassbox $(DESTDIR)$(ZSH_COMPDIR)/_glassbox $(DESTDIR)$(FISH_COMPDIR)/glassbox.fish
	rm -rf $(DATA_DIR)

clean:
	rm -rf $(B) glassbox tests/tmp

distclean: clean
	rm -f config.mk

# The Debian package, built from a copy of the tracked files under build/deb (dpkg-buildpackage
# writes beside the source folder): build/deb/glassbox_$(VERSION)_amd64.deb.
deb:
	rm -rf $(B)/deb && mkdir -p $(B)/deb/glassbox-$(VERSION)
	git ls-files -z -co --exclude-standard | xargs -0 cp --parents -t $(B)/deb/glassbox-$(VERSION)
	cd $(B)/deb/glassbox-$(VERSION) && dpkg-buildpackage -us -uc -b -j2
	@ls $(B)/deb/*.deb

.PHONY: all check bench install install-files uninstall clean distclean tests man completion deb fuzz fuzz-build FORCE
-include $(LIB_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_BIN:.t=.d) $(REPLAY_BIN:.replay=.d)
