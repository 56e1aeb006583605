# The image compose.yaml runs: the project's own CLI with the PostgreSQL, OTLP and OpenAI extras.
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY oneiros ./oneiros
RUN pip install --no-cache-dir ".[postgres,otlp,openai]"
CMD ["oneiros", "--help"]
