-- Atomic claim: a new key, or a FAILED one (a retry may take it over).
INSERT INTO {{schema}}.job_execution AS j (idempotency_key, status, attempts, updated_at)
VALUES ($1, 'PROCESSING', 0, now())
ON CONFLICT (idempotency_key) DO UPDATE SET status = 'PROCESSING', updated_at = now()
    WHERE j.status = 'FAILED'
RETURNING 1
