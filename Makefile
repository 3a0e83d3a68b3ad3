# erofskit: the two commands a newcomer needs are `make demo` and `make test`.
BUILD      ?= build
SAN_BUILD  ?= build-san
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps build build-san demo test test-fast test-san fuzz install clean

all: build

deps:
	@scripts/deps.sh

$(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

# -O1, as the sanitizers' authors advise (their checks stay in): the
# sanitized suite took 700 s at -O0, 662 s at -O1 (ctest -j2, 2 cores).
$(SAN_BUILD)/Makefile:
	cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
		-DEROFSKIT_SANITIZE=ON $(CMAKE_ARGS)

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

build-san: deps $(SAN_BUILD)/Makefile
	cmake --build $(SAN_BUILD) -j $(JOBS)

# Build an image of this source tree, check it, print a summary.
demo: build
	@scripts/demo.sh $(BUILD)/erofskit

# Both configurations, the whole suite on each.
test: build build-san
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS)

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-san: build-san
	cd $(SAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# libFuzzer targets (clang), each run FUZZ_SECONDS on a generated corpus.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/deps.sh --fuzz
	CC=clang cmake -S . -B build-fuzz -DEROFSKIT_FUZZ=ON -DEROFSKIT_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build build-fuzz -j $(JOBS)
	tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

# The binary, the shared and static libraries, the headers, erofskit.pc,
# the man pages and the bash completion under PREFIX, staged under DESTDIR
# when set (as packagers do): make install PREFIX=/usr DESTDIR=/tmp/stage
install:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCMAKE_INSTALL_PREFIX="$(PREFIX)" $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) build-fuzz
