-- Never regresses SUCCEEDED: a late failure cannot reopen finished work.
INSERT INTO {{schema}}.job_execution AS j (idempotency_key, status, attempts, last_error, updated_at)
VALUES ($1, 'FAILED', 1, $2, now())
ON CONFLICT (idempotency_key) DO UPDATE SET status = 'FAILED', attempts = j.attempts + 1, last_error = $2, updated_at = now()
    WHERE j.status <> 'SUCCEEDED'
