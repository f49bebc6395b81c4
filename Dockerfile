# SPDX-License-Identifier: ISC
#
# dsroute's container image: the static dsroute of ./dev.sh static, alone
# in an empty image, run as a non-root uid.  Build it and push it to your
# registry (docs/packaging.md, "The image"):
#
#	docker build -t dsroute:0.1.0 .
#	docker tag dsroute:0.1.0 REGISTRY/dsroute:0.1.0
#	docker push REGISTRY/dsroute:0.1.0
#
# tests/dockerfile.sh checks this file's shape with a Dockerfile parser.

# Build: Debian's toolchain and static libraries, and exactly the command
# a developer runs.
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN ./dev.sh static

# Run: the binary and nothing else; no shell, no libraries, no /etc.
# Give numeric addresses and ids, and ca= for TLS (docs/packaging.md,
# "A static binary").
FROM scratch
LABEL org.opencontainers.image.title="dsroute" \
      org.opencontainers.image.description="A router for the .NET diagnostic IPC protocol: Unix sockets to TCP and TLS" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="ISC" \
      org.opencontainers.image.source="https://github.com/dsroute/dsroute" \
      org.opencontainers.image.documentation="https://github.com/dsroute/dsroute/blob/main/README.md"
COPY --from=build /src/build/static/dsroute /usr/bin/dsroute
USER 65532:65532
# The ports of the examples: plain TCP (loopback in a pod, reached with
# kubectl port-forward) and TLS.
EXPOSE 9000 9443
ENTRYPOINT ["/usr/bin/dsroute"]
CMD ["--help"]
