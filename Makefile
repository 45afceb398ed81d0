# zlbench: the two commands README.md promises, wrapped around CMake.
#   make run    build (Release) and run the main job: zlbench batch on the default corpus
#   make test   build twice, Debug with ASan/UBSan and Release, and run every test in
#               each (GPU tests skip without a GPU)
# Other targets: build, bench-gpu (on a CUDA machine), clean.

BUILD      ?= build
TEST_BUILD ?= build-test
TEST_BUILD_REL ?= build-test-release
CTEST_ARGS ?=
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=
# The test build compiles the CUDA corpus for one architecture (sm_90) when
# nvcc is present: it still fails on a broken kernel, at half the time.
TEST_CUDA_ARCHS ?= 90

.PHONY: all build run test test-debug test-release bench-gpu clean deps deps-test

all: build

deps:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh test

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DZLB_TESTS=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/zlbench batch $(ARGS)

# Both build types, every test in each: a test that passes only in one of
# them (a timing check that holds only at ASan's speed, a bug that only the
# optimiser shows) is a defect. The Debug build has ASan/UBSan on.
test: test-debug test-release
	@echo "make test: Debug+ASan/UBSan ($(TEST_BUILD)) and Release ($(TEST_BUILD_REL)) both passed"

test-debug: deps-test
	cmake -S . -B $(TEST_BUILD) -DCMAKE_BUILD_TYPE=Debug -DZLB_TESTS=ON -DZLB_REQUIRE_CMOCKA=ON \
	  -DZLB_WERROR=ON -DZLB_ASAN=ON -DZLB_UBSAN=ON \
	  -DCMAKE_CUDA_ARCHITECTURES=$(TEST_CUDA_ARCHS) $(CMAKE_ARGS)
	cmake --build $(TEST_BUILD) -j $(JOBS)
	cd $(TEST_BUILD) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)
	@# Say why the GPU tests were skipped (no device, no CUDA build).
	@grep -h '^SKIP' $(TEST_BUILD)/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c || true

test-release: deps-test
	cmake -S . -B $(TEST_BUILD_REL) -DCMAKE_BUILD_TYPE=Release -DZLB_TESTS=ON -DZLB_REQUIRE_CMOCKA=ON \
	  -DZLB_WERROR=ON -DZLB_ASAN=OFF -DZLB_UBSAN=OFF \
	  -DCMAKE_CUDA_ARCHITECTURES=$(TEST_CUDA_ARCHS) $(CMAKE_ARGS)
	cmake --build $(TEST_BUILD_REL) -j $(JOBS)
	cd $(TEST_BUILD_REL) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)
	@grep -h '^SKIP' $(TEST_BUILD_REL)/Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c || true

bench-gpu:
	bash bench/gpu_all.sh

clean:
	rm -rf $(BUILD) $(TEST_BUILD) $(TEST_BUILD_REL)
