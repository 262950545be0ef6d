#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds and checks libdecodenum on Debian 12 (as root, or with sudo).
#
#   sh tools/build.sh selftest   install build tools, build, run `decodenum selftest`, then a synthetic decode
#   sh tools/build.sh test       install build and test tools, build, run the test suite
#   sh tools/build.sh aarch64    cross-build for AArch64 and run the suite under qemu-aarch64
#   sh tools/build.sh cross ARCH cross-build for a Debian architecture (s390x, ppc64el, armhf,
#                                armel, i386, aarch64) with Debian's cross compiler and run,
#                                under qemu-user, the digest test (the same constants as
#                                every other host) and `decodenum info`; s390x, the
#                                big-endian one, runs the whole suite
#                                (its cmocka, GMP and MPFR from the s390x multiarch packages)
#   sh tools/build.sh sanitize   build with ASan+UBSan and run the suite
#   sh tools/build.sh bench      build and run the benchmark (OpenBLAS and SLEEF peers)
#   GGML_SRC=<dir> sh tools/build.sh bench-ggml [avx2|native]
#                                build ggml from a ggml source tree (tinyBLAS on; its
#                                AVX2/FMA/F16C build by default, -march=native with
#                                `native`) and run the F16, BF16, dot, attention and GDN
#                                benches and decodenum-accuracy-ggml against it
#   LLAMA_SRC=<dir> sh tools/build.sh bench-llama [avx2|native|both]
#                                build llama.cpp from a source tree (its AVX2 build by
#                                default; `both` adds -march=native) and run the decode
#                                example beside it: tokens/s on the same GGUF files, the
#                                512-token prompt's tokens/s, and the logits digest at
#                                1-3 threads (tools/llama_compare.sh -P 512)
#   sh tools/build.sh fuzz       build the libFuzzer harnesses (clang-14) and run each for
#                                DN_FUZZ_SECONDS (default 45) seconds; fails on any crash
#   sh tools/build.sh lint       the tree formatted as .clang-format says (tools/format.sh
#                                --check), SPDX lines (tools/spdx.sh --check), and no
#                                function or file past its size (tools/sizes.sh)
#   sh tools/build.sh werror     build everything with -Werror in GCC and in Clang 14
#                                (-Wall -Wextra -Wshadow; no tests run)
#   sh tools/build.sh abi        the ABI against abi/ (tools/abi.sh check), and that the
#                                check fails on a removed and a changed function
#   sh tools/build.sh deb        the Debian packages (dpkg-buildpackage -us -uc -b, tests
#                                included), lintian with no error or warning, and the
#                                autopkgtest consumer against the installed packages
#                                (tools/deb.sh --autopkgtest)
#
# Set DN_NO_APT=1 to skip the package installs. Build trees go to build/<what>.
set -eu
cd "$(dirname "$0")/.."
what=${1:-test}
jobs=$(nproc 2>/dev/null || echo 2)

apt_install() {
    [ "${DN_NO_APT:-0}" = 1 ] && return 0
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    [ -z "$missing" ] && return 0
    sudo=""
    [ "$(id -u)" = 0 ] || sudo=sudo
    for p in $missing; do
        case "$p" in *:*) dpkg --print-foreign-architectures | grep -qx "${p#*:}" ||
            $sudo dpkg --add-architecture "${p#*:}" ;; esac
    done
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
}

base="cmake make gcc libc6-dev pkg-config binutils"
testing="libcmocka-dev libgmp-dev libmpfr-dev"

case "$what" in
selftest)
    apt_install $base
    cmake --preset release -DDECODENUM_BUILD_TESTS=OFF -DDECODENUM_BUILD_BENCH=OFF -DDECODENUM_BUILD_EXAMPLES=OFF
    cmake --build --preset release -j "$jobs"
    ./build/release/decodenum info
    ./build/release/decodenum selftest
    # the whole decode loop: a synthetic model, its tokens per second and digest
    ./build/release/decodenum decode -n 32 -t 2
    ;;
test)
    apt_install $base $testing
    # the examples and benches back on: `selftest`, `bench` and `bench-llama`
    # configure this tree without some of them, and their tests count here
    cmake --preset release -DDECODENUM_BUILD_EXAMPLES=ON -DDECODENUM_BUILD_BENCH=ON
    cmake --build --preset release -j "$jobs"
    ctest --preset release -j "$jobs"
    ;;
aarch64)
    apt_install $base $testing gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libcmocka-dev:arm64 libgmp-dev:arm64 libmpfr-dev:arm64
    cmake --preset aarch64
    cmake --build --preset aarch64 -j "$jobs"
    ctest --preset aarch64 -j "$jobs"
    ;;
cross)
    # The library built as a porter builds it (Release, no flags of one's own:
    # cmake/decodenum_target.cmake picks what binary32 evaluation needs) and
    # run under qemu-user. The static targets link their programs statically
    # (cmake/toolchain-<arch>.cmake says why); they run the digest, which
    # needs no cmocka.
    arch=${2:-}
    full=0
    shared=OFF
    case "$arch" in
    s390x) triple=s390x-linux-gnu full=1 shared=ON ;;
    ppc64el) triple=powerpc64le-linux-gnu ;;
    armhf) triple=arm-linux-gnueabihf ;;
    armel) triple=arm-linux-gnueabi ;;
    i386) triple=i686-linux-gnu ;;
    aarch64) triple=aarch64-linux-gnu shared=ON ;;
    *) echo "cross: one of s390x ppc64el armhf armel i386 aarch64" >&2; exit 2 ;;
    esac
    debarch=$arch
    [ "$arch" = aarch64 ] && debarch=arm64
    extra=""
    [ "$full" = 1 ] && extra="libcmocka-dev:$debarch libgmp-dev:$debarch libmpfr-dev:$debarch"
    [ "$arch" = aarch64 ] && extra="libcmocka-dev:arm64"
    apt_install $base "gcc-$triple" "libc6-dev-$debarch-cross" qemu-user $extra
    dir="build/cross-$arch"
    cmake -S . -B "$dir" --toolchain "cmake/toolchain-$arch.cmake" -DCMAKE_BUILD_TYPE=Release \
        -DBUILD_SHARED_LIBS=$shared -DDECODENUM_BUILD_TESTS=ON -DDECODENUM_BUILD_BENCH=OFF \
        -DDECODENUM_BUILD_EXAMPLES=OFF
    # The self-test is not run emulated (its plan takes tens of minutes under
    # qemu): the aarch64 step runs kernels_neon, the same harness on a
    # shorter plan, and a scalar-only target would compare the references
    # with themselves.
    tests='^(digest_|info$)'
    if [ "$full" = 1 ]; then
        # the whole suite but the scalar self-comparison; the GMP/MPFR
        # oracles at a tenth of their cases (10^5 each; qemu is ~20x slower)
        cmake --build "$dir" -j "$jobs"
        DECODENUM_TEST_SCALE=${DECODENUM_TEST_SCALE:-0.1} \
            ctest --test-dir "$dir" --output-on-failure -j "$jobs" -LE exhaustive -E '^selftest$'
    else
        cmake --build "$dir" -j "$jobs" --target decodenum_cli test_digest
        ctest --test-dir "$dir" --output-on-failure -R "$tests" -E portable_wide
    fi
    ;;
sanitize)
    apt_install $base $testing
    cmake --preset sanitize
    cmake --build --preset sanitize -j "$jobs"
    ctest --preset sanitize -j "$jobs"
    ;;
bench)
    apt_install $base libopenblas-dev libsleef-dev
    cmake --preset release -DDECODENUM_BUILD_TESTS=OFF
    cmake --build --preset release -j "$jobs"
    # Every bench program the tree builds: decodenum-bench, decodenum-bench-f16,
    # decodenum-bench-math, ... (bench/CMakeLists.txt).
    for b in ./build/release/bench/decodenum-bench*; do
        if [ -f "$b" ] && [ -x "$b" ]; then echo "== $b"; "$b"; echo; fi
    done
    # OpenBLAS picks its kernels by CPU (AVX-512 ones where the CPU has them);
    # its AVX2 kernels are the like-for-like peer of the AVX2 fdot.
    echo "== ./build/release/bench/decodenum-bench with OPENBLAS_CORETYPE=Haswell (OpenBLAS's AVX2 kernels)"
    OPENBLAS_CORETYPE=Haswell ./build/release/bench/decodenum-bench
    ;;
bench-ggml)
    # ggml as a peer measured in the same run (bench/ggml_peer.h). The AVX2
    # build is the one whose F16 bits the library reproduces: the F16 bench
    # then also checks that ours equal ggml's, every bit.
    : "${GGML_SRC:?set GGML_SRC to a ggml source tree (github.com/ggml-org/ggml)}"
    variant=${2:-avx2}
    case "$variant" in
    avx2) isa="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF" ;;
    native) isa="-DGGML_NATIVE=ON" ;;
    *) echo "bench-ggml: variant avx2 or native" >&2; exit 2 ;;
    esac
    apt_install $base g++
    cmake -S "$GGML_SRC" -B "build/ggml-$variant" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DGGML_LLAMAFILE=ON -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF $isa
    cmake --build "build/ggml-$variant" -j "$jobs"
    cmake --install "build/ggml-$variant" --prefix "build/ggml-$variant/prefix"
    cmake --preset release -B "build/bench-ggml-$variant" -DDECODENUM_BUILD_TESTS=OFF \
        -DDECODENUM_BENCH_GGML="$PWD/build/ggml-$variant/prefix"
    progs="decodenum-bench-f16 decodenum-bench-dot decodenum-bench-attention decodenum-bench-gdn"
    cmake --build "build/bench-ggml-$variant" --target $progs decodenum-accuracy-ggml -j "$jobs"
    for b in $progs decodenum-accuracy-ggml; do
        echo "== $b against ggml ($variant)"
        "./build/bench-ggml-$variant/bench/$b"
        echo
    done
    echo "== decodenum-bench-f16 --bf16 against ggml ($variant)"
    "./build/bench-ggml-$variant/bench/decodenum-bench-f16" --bf16
    ;;
bench-llama)
    # llama.cpp as the decode example's peer (docs/decode.md, "Against
    # llama.cpp"): its own CMake, CPU only, the tools the comparison runs.
    : "${LLAMA_SRC:?set LLAMA_SRC to a llama.cpp source tree (github.com/ggml-org/llama.cpp)}"
    variants=${2:-avx2}
    [ "$variants" = both ] && variants="avx2 native"
    apt_install $base g++ ninja-build
    cmake --preset release -DDECODENUM_BUILD_TESTS=OFF
    cmake --build --preset release --target decodenum_cli -j "$jobs"
    dirs=""
    for variant in $variants; do
        case "$variant" in
        avx2) isa="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF" ;;
        native) isa="-DGGML_NATIVE=ON" ;;
        *) echo "bench-llama: variant avx2, native or both" >&2; exit 2 ;;
        esac
        dir="$PWD/build/llama-$variant"
        cmake -S "$LLAMA_SRC" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF \
            -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON \
            -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DGGML_CCACHE=OFF $isa
        cmake --build "$dir" --target llama-bench llama-quantize -j "$jobs"
        cc -O2 -std=c11 -I"$LLAMA_SRC/include" -I"$LLAMA_SRC/ggml/include" -Iexamples/decode \
            bench/llama_logits.c \
            -o "$dir/llama-logits" -L"$dir/bin" -lllama -lggml -lggml-base -Wl,-rpath,"$dir/bin"
        dirs="$dirs $dir"
    done
    # shellcheck disable=SC2086
    sh tools/llama_compare.sh -P 512 $dirs
    ;;
fuzz)
    # tests/fuzz/README.md: every reader and the quantized matrix-vector
    # product under ASan+UBSan, from random bytes. Each harness grows its
    # corpus in build/fuzz/corpus-<name> (empty in a fresh tree) for a bounded
    # time; a crash, a sanitizer report, a leak or a failed contract check
    # stops it with a non-zero status (the input in build/fuzz/artifacts/).
    apt_install $base $testing clang-14 libclang-rt-14-dev
    cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang-14 -DDECODENUM_BUILD_FUZZ=ON \
        -DDECODENUM_BUILD_BENCH=OFF -DDECODENUM_BUILD_EXAMPLES=OFF
    cmake --build build/fuzz --target fuzz_read_row fuzz_mat_vec fuzz_repack fuzz_f16 fuzz_attention \
        fuzz_gdn fuzz_fp8 fuzz_gguf decodenum_cli -j "$jobs"
    secs=${DN_FUZZ_SECONDS:-45}
    mkdir -p build/fuzz/artifacts
    run_fuzz() { # name, then libFuzzer options
        name=$1
        shift
        mkdir -p "build/fuzz/corpus-$name"
        echo "== fuzz_$name, $secs s"
        ./build/fuzz/tests/fuzz/fuzz_$name "build/fuzz/corpus-$name" -max_total_time="$secs" \
            -print_final_stats=1 -artifact_prefix="build/fuzz/artifacts/$name-" "$@"
    }
    run_fuzz read_row -max_len=4096
    # whole matrices from the start (the default length ramp spends the run
    # under 500 bytes: one 256-element row with a float activation is 1.2 KB)
    run_fuzz mat_vec -max_len=8192 -len_control=0
    run_fuzz repack -max_len=16384 -len_control=0
    run_fuzz f16 -max_len=32768 -len_control=0
    run_fuzz attention -max_len=8192 -len_control=0
    run_fuzz gdn -max_len=8192 -len_control=0
    run_fuzz fp8 -max_len=8192 -len_control=0
    # the GGUF reader from small synthetic models' files (a Llama layer,
    # 9 KB; two Gated-DeltaNet layers, 20 KB), which the mutations turn
    # into every kind of bad file
    mkdir -p build/fuzz/corpus-gguf
    for arch in llama hybrid; do
        ./build/fuzz/decodenum decode --arch $arch --type q8_0 --embd 32 --ffn 32 --heads 2 \
            --kv-heads 1 --vocab 8 --layers $([ $arch = llama ] && echo 1 || echo 2) \
            --write-gguf build/fuzz/corpus-gguf/seed-$arch.gguf >/dev/null
    done
    run_fuzz gguf -max_len=32768 -len_control=0
    ;;
lint)
    apt_install clang-format git
    sh tools/format.sh --check
    sh tools/spdx.sh --check
    sh tools/sizes.sh
    ;;
werror)
    # The project's warnings (CMakeLists.txt) as errors, in both compilers,
    # with the distribution's flags and build type (dpkg-buildflags: -O2 and
    # the hardening options, CMAKE_BUILD_TYPE=None).
    apt_install $base $testing clang-14 dpkg-dev
    flags="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
    for cc in gcc clang-14; do
        echo "== $cc -Werror"
        cmake -S . -B "build/werror-$cc" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=None \
            -DCMAKE_C_FLAGS="$flags -Werror" -DDECODENUM_BUILD_TESTS=ON
        cmake --build "build/werror-$cc" -j "$jobs"
    done
    ;;
abi)
    apt_install $base abigail-tools
    sh tools/abi.sh map
    sh tools/abi.sh check
    sh tools/abi.sh selftest
    ;;
deb)
    apt_install $base $testing build-essential debhelper dpkg-dev lintian pkgconf fakeroot
    sh tools/deb.sh --autopkgtest
    ;;
*)
    echo "usage: sh tools/build.sh lint|selftest|test|aarch64|cross ARCH|sanitize|bench|bench-ggml|bench-llama|fuzz|werror|abi|deb" >&2
    exit 2
    ;;
esac
