SELECT status FROM {{schema}}.job_execution WHERE idempotency_key = $1
