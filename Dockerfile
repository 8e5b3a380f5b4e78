# Lede: build with the Swift toolchain image, run on a slim Debian with a statically linked Swift stdlib.
# Build and runtime share one Debian release (glibc), and deploy/rootfs-test.sh rebuilds the runtime stage with
# debootstrap from this file (release and package list) to run the binary in it as uid 10001 — CI's check that the
# image has every library the binary needs.
FROM swift:6.3-bookworm AS build
# OpenSSL's headers for the upstream client's TLS, zlib's for gzip and the PNG card, FreeType's, HarfBuzz's and
# libjpeg-turbo's for the share card (system-library targets).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl-dev zlib1g-dev libfreetype-dev libharfbuzz-dev libjpeg62-turbo-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# The profile of Benchmarks/pgo.sh's workload (IR-level PGO: hot paths laid out and inlined for what runs;
# BENCHMARKS.md has what it measures): Package.swift applies it to every release build when the file is there.
COPY Benchmarks/lede.profdata ./Benchmarks/
RUN swift build -c release --static-swift-stdlib --product lede \
    && install -D "$(swift build -c release --show-bin-path)/lede" /out/lede

FROM debian:bookworm-slim
# libssl for the upstream client's TLS and ca-certificates for the system trust store it verifies against
# (Wikimedia's certificates); FreeType, HarfBuzz, libjpeg-turbo and the Noto fonts (every script the Wikipedias use,
# CJK included) for the share card. zlib and libstdc++ are part of the base image.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends libssl3 ca-certificates libfreetype6 libharfbuzz0b libjpeg62-turbo fonts-noto-core fonts-noto-cjk \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin lede
COPY --from=build /out/lede /usr/local/bin/lede
USER 10001
EXPOSE 8080
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 CMD ["/usr/local/bin/lede", "healthcheck"]
# No arguments: the embedded default on 0.0.0.0:8080.
ENTRYPOINT ["/usr/local/bin/lede"]
