{% snapshot orders_snap %}
{{ config(target_schema='dbtsnap', unique_key='id', strategy='timestamp', updated_at='updated_at') }}
select id, customer, amount, updated_at from {{ source('raw', 'orders') }}
{% endsnapshot %}
