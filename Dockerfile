# daybook: one image for every role (scheduler, worker, admin server, one-shot commands).
# Node 24 LTS, the release CI's second run tests (.ci/node24 pins the same one): bump them together.
FROM node:24.21.0-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
COPY jobs ./jobs
COPY migrations ./migrations
COPY tsconfig.json ./
# Compile the CLI once here (node_modules/.cache/daybook): the image then runs JavaScript, without
# tsx's loader thread (about 30 MiB per process); node_modules is not writable by the user below.
RUN node bin/daybook.js --version
# The folder of the compose file's exports volume: a new volume takes its owner, so the user below
# can write packages there.
RUN mkdir /exports && chown node:node /exports
USER node
ENTRYPOINT ["node", "bin/daybook.js"]
CMD ["--help"]
