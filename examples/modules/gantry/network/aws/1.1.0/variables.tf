variable "name" {
  description = "Name prefix for every resource of the network"
  type        = string
}

variable "cidr_block" {
  description = "IPv4 CIDR block of the VPC"
  type        = string
  default     = "10.0.0.0/16"
}

variable "availability_zones" {
  description = "Zones to spread the subnets over"
  type        = list(string)
  default     = ["eu-west-1a", "eu-west-1b"]
}
