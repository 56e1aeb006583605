# The image compose.yaml runs: the project's own CLI with the PostgreSQL and OTLP extras.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY oneiros ./oneiros
RUN pip install --no-cache-dir ".[postgres,otlp]"
CMD ["oneiros", "--help"]
