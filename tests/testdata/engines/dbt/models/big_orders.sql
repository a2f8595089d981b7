{{ config(materialized='view') }}
select id, customer, amount from {{ source('raw', 'orders') }} where amount > 10
