{{ config(materialized='incremental', unique_key='id') }}
select id, customer, amount, updated_at from {{ source('raw', 'orders') }}
{% if is_incremental() %} where updated_at > (select max(updated_at) from {{ this }}) {% endif %}
