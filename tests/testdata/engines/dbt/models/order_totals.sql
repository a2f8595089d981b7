{{ config(materialized='table') }}
select customer, count(*) as n, sum(amount) as total from {{ source('raw', 'orders') }} group by customer
