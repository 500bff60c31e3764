SELECT business_key, count(*) FROM {{schema}}.effects GROUP BY business_key
