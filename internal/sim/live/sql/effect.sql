INSERT INTO {{schema}}.effects (business_key, idempotency_key, worker, attempt, fence)
VALUES ($1, $2, $3, $4, NULLIF($5::bigint, 0))
