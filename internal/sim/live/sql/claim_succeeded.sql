-- Inside the effect's transaction: record SUCCEEDED unless it already is.
INSERT INTO {{schema}}.job_execution AS j (idempotency_key, status, updated_at)
VALUES ($1, 'SUCCEEDED', now())
ON CONFLICT (idempotency_key) DO UPDATE SET status = 'SUCCEEDED', last_error = NULL, updated_at = now()
    WHERE j.status <> 'SUCCEEDED'
RETURNING 1
