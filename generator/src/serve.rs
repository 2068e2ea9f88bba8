//! `wiregen serve` (STUB: the validation-service work replaces this file).
