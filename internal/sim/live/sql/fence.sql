-- Accept the token unless a newer one was already seen for this key.
INSERT INTO {{schema}}.fence AS f (business_key, max_token) VALUES ($1, $2)
ON CONFLICT (business_key) DO UPDATE SET max_token = EXCLUDED.max_token
    WHERE f.max_token <= EXCLUDED.max_token
RETURNING 1
